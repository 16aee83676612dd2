package master

import (
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// Tiers is what a client collecting a job tracks of a master of
// masters (order_masters: True) for one job, as LocalClient.get_iter_returns does with the
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
type Tiers struct {
	on       bool
	relays   map[string]bool
	waiting  map[string]bool // syndics yet to report
	deadline time.Time       // end of syndic_wait
	wait     time.Duration
	jid      string
}

// Deadline is when syndic_wait ends.
func (t *Tiers) Deadline() time.Time { return t.deadline }

// NewTiers starts tracking job jid's tiers with what the master said
// of its syndics; without order_masters it changes nothing.
func NewTiers(info SyndicInfo, jid string) *Tiers {
	t := &Tiers{jid: jid, on: info.OrderMasters}
	if !t.on {
		return t
	}
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

// Expected drops the relays from the minions the master expected.
func (t *Tiers) Expected(minions []string) []string {
	if !t.on {
		return minions
	}
	return slices.DeleteFunc(minions, func(id string) bool { return t.relays[id] })
}

// Event reads a job event for reported minion lists: it returns the
// minions to add to the expected set.
func (t *Tiers) Event(tag string, data *ordered.Map) []string {
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

// Pending reports whether syndics are still to report within
// syndic_wait; past it, the silent ones are returned once, to be
// counted as minions that did not return.
func (t *Tiers) Pending(now time.Time) (waiting bool, silent []string) {
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

// GatherExtra is the find_job round's extra time on a master of
// masters: the check travels through the syndics (get_iter_returns adds
// syndic_wait).
func (t *Tiers) GatherExtra() time.Duration {
	if !t.on {
		return 0
	}
	return t.wait
}
