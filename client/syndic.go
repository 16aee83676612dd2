package client

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// syndicAsker is a publisher that can say which of the master's ids are
// syndics (master.Client.Syndics).
type syndicAsker interface {
	Syndics(ctx context.Context) (master.SyndicInfo, error)
}

// tiers is what Collect tracks of a master of masters (order_masters:
// True) for one job, as LocalClient.get_iter_returns does with the
// regex (salt/job|syndic/.*)/<jid>: each syndic's lower master reports
// the minions it expects (its salt/job/<jid>/new, forwarded as
// syndic/<id>/…), and those minions join the expected set.
//
// Salt always waits syndic_wait before it ends, and then waits for the
// syndic ids themselves, which never return (≈ timeout +
// gather_job_timeout + syndic_wait). Brine ends as soon as every
// registered syndic has reported and every expected minion returned;
// syndic_wait bounds only the wait for a report. A relay (a syndic that
// is not also a minion of this master) is not expected to return; a
// syndic that never reports is named among the minions that did not
// return, so a silent tier is never lost without a word.
type tiers struct {
	on       bool
	relays   map[string]bool
	waiting  map[string]bool // syndics yet to report
	deadline time.Time       // end of syndic_wait
	wait     time.Duration
	jid      string
}

// newTiers asks the master about its syndics; a publisher that cannot
// tell, or a master without order_masters, gives the plain behaviour.
func (s *Session) newTiers(ctx context.Context, jid string) *tiers {
	t := &tiers{jid: jid}
	a, ok := s.Pub.(syndicAsker)
	if !ok {
		return t
	}
	info, err := a.Syndics(ctx)
	if err != nil || !info.OrderMasters {
		return t
	}
	t.on = true
	t.wait = time.Duration(info.SyndicWait * float64(time.Second))
	t.deadline = time.Now().Add(t.wait)
	t.relays, t.waiting = map[string]bool{}, map[string]bool{}
	for _, id := range info.Relays {
		t.relays[id] = true
	}
	for _, id := range info.Syndics {
		t.waiting[id] = true
	}
	return t
}

// expected drops the relays from the minions the master expected.
func (t *tiers) expected(minions []string) []string {
	if !t.on {
		return minions
	}
	return slices.DeleteFunc(minions, func(id string) bool { return t.relays[id] })
}

// event reads a job event for reported minion lists: it returns the
// minions to add to the expected set.
func (t *tiers) event(tag string, data *ordered.Map) []string {
	if !t.on || data == nil || !data.Has("minions") {
		return nil
	}
	rest := tag
	syndic := ""
	if r, ok := strings.CutPrefix(tag, "syndic/"); ok {
		syndic, rest, _ = strings.Cut(r, "/")
	}
	if rest != t.jid && rest != "salt/job/"+t.jid+"/new" {
		return nil
	}
	if syndic != "" {
		delete(t.waiting, syndic)
	}
	var add []string
	l, _ := data.Value("minions").([]any)
	for _, x := range l {
		if id, ok := x.(string); ok && !t.relays[id] {
			add = append(add, id)
		}
	}
	return add
}

// pending reports whether syndics are still to report within
// syndic_wait; past it, the silent ones are returned once, to be
// counted as minions that did not return.
func (t *tiers) pending(now time.Time) (waiting bool, silent []string) {
	if !t.on || len(t.waiting) == 0 {
		return false, nil
	}
	if now.Before(t.deadline) {
		return true, nil
	}
	for id := range t.waiting {
		silent = append(silent, id)
	}
	slices.Sort(silent)
	t.waiting = nil
	return false, silent
}

// gatherExtra is the find_job round's extra time on a master of
// masters: the check travels through the syndics (get_iter_returns adds
// syndic_wait).
func (t *tiers) gatherExtra() time.Duration {
	if !t.on {
		return 0
	}
	return t.wait
}

// OrderMasters reports whether the session's master has syndics below
// it (order_masters: True): a target that matches none of its own
// minions may still reach theirs, so the CLI does not stop at "No
// minions matched" (salt/client/__init__.py _check_pub_data).
func (s *Session) OrderMasters(ctx context.Context) bool {
	a, ok := s.Pub.(syndicAsker)
	if !ok {
		return false
	}
	info, err := a.Syndics(ctx)
	return err == nil && info.OrderMasters
}
