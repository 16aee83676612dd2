package run

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// parallelProc is one state started with `parallel: True`: Salt forks a
// process per such state (salt/state.py call_parallel); Brine runs a
// goroutine. ret is set before done is closed.
type parallelProc struct {
	done chan struct{}
	ret  *ordered.Map
}

// startParallel starts the state function in its own goroutine and
// returns Salt's placeholder return ("Started in a separate process",
// result None). The placeholder is completed in place by reconcile once
// the state finished: before a state that requires it is evaluated and
// at the end of the run, as reconcile_procs does.
func (r *Runner) startParallel(ctx context.Context, c *stateCall) *ordered.Map {
	name := c.args["name"]
	if !modules.Truthy(name) {
		name = c.low.Value("name")
		if !modules.Truthy(name) {
			name = c.low.Value("__id__")
		}
	}
	p := &parallelProc{done: make(chan struct{})}
	pc := *c
	// The state sees the running dict as it was when it started (Salt
	// hands the child a frozen copy); the runner goes on writing the
	// live one.
	pc.running = r.running.snapshot()
	// Salt's parallel state is a process with its own copy of
	// __context__; the goroutine gets its own copy of the job context,
	// so that state functions caching in it never write one map from two
	// goroutines.
	penv := *c.env
	if c.env.Context != nil {
		penv.Context = make(map[string]any, len(c.env.Context))
		for k, v := range c.env.Context {
			penv.Context[k] = v
		}
	}
	pc.env = &penv
	// The runner may go on marking the chunk (__prereq__, __agg__) while
	// the state runs: the goroutine reads its own copy.
	pc.low = c.low.Copy()
	go func() {
		defer close(p.done)
		p.ret = r.runParallel(ctx, &pc)
	}()
	ret := ordered.FromPairs("name", name, "result", nil, "changes", ordered.New(),
		"comment", "Started in a separate process")
	if r.procs == nil {
		r.procs = map[*ordered.Map]*parallelProc{}
	}
	r.procs[ret] = p
	return ret
}

// runParallel is _call_parallel_target: the state's own start time and
// duration, `__parallel__: True`, and retry handled inside the parallel
// run.
func (r *Runner) runParallel(ctx context.Context, c *stateCall) *ordered.Map {
	start := r.now()
	ret := r.invoke(ctx, c)
	ret.Set("start_time", startTime(start))
	ret.Set("duration", durationMS(r.now().Sub(start)))
	ret.Set("__parallel__", true)
	if c.low.Has("retry") {
		ret = r.parallelRetry(ctx, c, ret)
	}
	return ret
}

// parallelRetry is the retry loop of _call_parallel_target, which
// differs from State.call's: it re-runs up to `attempts` times after the
// first run (State.call runs `attempts` times in all), each re-run's own
// duration is taken as (about) zero, and the attempt comment describes
// the re-run's result, appended after the previous comment. Salt gives a
// re-run's return neither `__parallel__` nor (after the first re-run) a
// start_time, so after a retry the merged return keeps the placeholder's
// start_time and has no `__parallel__`; Brine does the same.
func (r *Runner) parallelRetry(ctx context.Context, c *stateCall, ret *ordered.Map) *ordered.Map {
	s := retryData(c.low.Value("retry"))
	if c.env.Test {
		c := ""
		if v := ret.Value("comment"); modules.Truthy(v) {
			c = str(v)
		}
		ret.Set("comment", c+"  "+s.testComment())
		return ret
	}
	for retries := 1; s.attempts >= retries; retries++ {
		if ret.Value("result") == s.until {
			break
		}
		interval, ok := s.wait(ctx)
		if !ok {
			return ret
		}
		next := r.invoke(ctx, c)
		comment := ""
		if c := next.Value("comment"); modules.Truthy(c) {
			comment = fmt.Sprintf("Attempt %d: Returned a result of \"%s\", with the following comment: \"%s\"",
				retries, pyBool(next.Value("result")), str(c))
		}
		next.Set("comment", str(ret.Value("comment"))+"\n"+comment)
		d0, _ := ret.Value("duration").(float64)
		next.Set("duration", d0+float64(interval*1000))
		if retries == 1 {
			next.Set("start_time", ret.Value("start_time"))
		}
		ret = next
	}
	return ret
}

// reconcile waits for the parallel state behind a placeholder return, if
// it is one, and completes the placeholder with the state's return
// (running[tag].update(ret) in reconcile_procs): the placeholder keeps
// its __run_num__, __sls__ and __id__.
func (r *Runner) reconcile(ret *ordered.Map) {
	p, ok := r.procs[ret]
	if !ok {
		return
	}
	<-p.done
	delete(r.procs, ret)
	p.ret.Range(func(k, v any) bool {
		ret.Set(k, v)
		return true
	})
}

// reconcileAll waits for every parallel state still running.
func (r *Runner) reconcileAll() {
	for ret := range r.procs {
		r.reconcile(ret)
	}
}
