package main

import (
	"context"
	"fmt"
	"time"
)

// row prints one Markdown table row: column, measure, figure, notes.
func row(label, measure, figure, notes string) {
	fmt.Printf("| %s | %s | %s | %s |\n", label, measure, figure, notes)
}

// bench runs every measure against o.url and prints its rows.
func bench(ctx context.Context, o options) error {
	if o.floor {
		if err := floor(ctx, o); err != nil {
			return err
		}
	}
	a := newAPI(o.url, o.conc+10)
	tok, err := a.login(ctx, o.user, o.pass, o.eauth)
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	a.token = tok
	if err := waitMinions(ctx, a, o.minions); err != nil {
		return err
	}
	ids := make([]string, o.minions)
	for i := range ids {
		ids[i] = fmt.Sprintf("api-%05d", i)
	}
	rt, err := roundTrip(ctx, a, o.minions, o.reps)
	if err != nil {
		return err
	}
	row(o.label, fmt.Sprintf("POST / local test.ping, %d minions (%d in a row)", o.minions, o.reps),
		"p50 "+ms(rt.quantile(0.5))+" ms", "p90 "+ms(rt.quantile(0.9))+" ms")
	asyncRow(o.label, "local_async + GET /jobs/<jid>", asyncLoad(ctx, a, ids, o.conc, o.dur, true), o.conc)
	asyncRow(o.label, "local_async alone", asyncLoad(ctx, a, ids, o.conc, o.dur/2, false), o.conc)
	if o.logins > 0 {
		ls, el := loginLoad(ctx, o.url, o.user, o.pass, o.eauth, o.loginConc, o.logins)
		row(o.label, fmt.Sprintf("POST /login (%s), %d at a time", o.eauth, o.loginConc),
			fmt.Sprintf("%.0f logins/s", float64(ls.count())/el.Seconds()), "p50 "+ms(ls.quantile(0.5))+" ms"+ls.errSummary())
	}
	if len(o.subs) > 0 {
		return eventsRows(ctx, a, o)
	}
	return nil
}

// floor runs the closed loop against the fixed-answer server.
func floor(ctx context.Context, o options) error {
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	url, err := floorServer(fctx)
	if err != nil {
		return err
	}
	f := newAPI(url, o.conc+10)
	asyncRow("load generator alone", "fixed answers, same loop", asyncLoad(ctx, f, []string{"api-00001"}, o.conc, o.dur/2, true), o.conc)
	return nil
}

// asyncRow prints a closed-loop run.
func asyncRow(label, what string, r asyncResult, conc int) {
	row(label, fmt.Sprintf("%s, %d clients", what, conc), fmt.Sprintf("%.0f req/s", r.rate()),
		fmt.Sprintf("p50 %s ms, p99 %s ms (POST p99 %s, GET p99 %s); generator CPU %.0f%% of one core%s",
			ms(r.all.quantile(0.5)), ms(r.all.quantile(0.99)), ms(r.post.quantile(0.99)), ms(r.get.quantile(0.99)),
			100*r.clientCPU.Seconds()/r.elapsed.Seconds(), r.all.errSummary()))
}

// eventsRows runs, for each count of reading and of stalled /events
// subscribers, the jobs with none open and then with them, and prints the
// p50 round trips and their ratio: each condition is read against the run
// just before it, since the machine's load drifts over minutes. A server
// that cannot run the jobs with that many streams open gets a row saying
// so, not an abort.
func eventsRows(ctx context.Context, a *api, o options) error {
	for _, n := range o.subs {
		for _, stall := range []bool{false, true} {
			base, _, err := jobsWhile(ctx, a, o.minions, o.jobs)
			if err != nil {
				return err
			}
			p50 := base.quantile(0.5)
			cpu0, t0 := cpuTime(), time.Now()
			line, rt, err := eventsRun(ctx, a, o.minions, n, o.jobs, stall)
			cpu := 100 * (cpuTime() - cpu0).Seconds() / time.Since(t0).Seconds()
			if err != nil {
				row(o.label, fmt.Sprintf("%d jobs with %d subscribers (stalled: %v)", o.jobs, n, stall), "failed", err.Error())
				continue
			}
			q := rt.quantile(0.5)
			row(o.label, fmt.Sprintf("%d jobs local test.ping '*' with %s", o.jobs, line), "p50 "+ms(q)+" ms",
				fmt.Sprintf("none just before: p50 %s ms; **%.2f×**; p99 %s ms (none %s); generator CPU %.0f%% of one core",
					ms(p50), float64(q)/float64(p50), ms(rt.quantile(0.99)), ms(base.quantile(0.99)), cpu))
		}
	}
	return nil
}

// waitMinions polls until every expected minion answers test.ping.
func waitMinions(ctx context.Context, a *api, n int) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		ret, err := a.run(ctx, lowstate{"client": "local", "tgt": "*", "fun": "test.ping"})
		if err == nil && len(ret) >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d minions answer (%v)", len(ret), n, err)
		}
		time.Sleep(2 * time.Second)
	}
}
