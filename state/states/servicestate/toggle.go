package servicestate

import (
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/states"
)

// phrases words the three "started" states of _enable and _disable:
// true (running), none (in the desired state) and false (dead).
type phrases struct{ running, desired, dead string }

// toggle is _enable (on) or _disable (off), updating r as Salt's
// ret.update(_enable(...)) does. started is "true", "none" or "false".
func (s svc) toggle(r *states.Result, on bool, started string, result bool) {
	name := s.name
	pick := func(p phrases) string {
		switch started {
		case "true":
			return p.running
		case "none":
			return p.desired
		}
		return p.dead
	}
	ok, err := s.available(r)
	if err != nil {
		r.Result, r.Comment = states.False, strerror(err)
		return
	}
	if !ok {
		if !on {
			r.Result = states.True
		}
		return
	}
	r.Result = states.TriOf(result)
	word, check, test := "Enable", "enabled", "enable"
	if !on {
		word, check, test = "Disable", "disabled", "disable"
	}
	if !s.has(test) || !s.has(check) {
		r.Comment = pick(phrases{
			fmt.Sprintf("%s is not available on this minion, service %s started", word, name),
			fmt.Sprintf("%s is not available on this minion, service %s is in the desired state", word, name),
			fmt.Sprintf("%s is not available on this minion, service %s is dead", word, name)})
		return
	}
	before, err := s.bool(check)
	if err != nil {
		r.Result, r.Comment = states.False, strerror(err)
		return
	}
	if before {
		if started == "none" {
			r.Changes = ordered.New()
		}
		r.Comment = pick(phrases{
			fmt.Sprintf("Service %s is already %s, and is running", name, check),
			fmt.Sprintf("Service %s is already %s, and is in the desired state", name, check),
			fmt.Sprintf("Service %s is already %s, and is dead", name, check)})
		return
	}
	if s.c.Env.Test {
		r.Result = states.None
		r.Comment = fmt.Sprintf("Service %s set to be %s", name, check)
		return
	}
	done, err := s.bool(test)
	if err == nil && done {
		r.Changes = ordered.New()
		if after, _ := s.bool(check); after != before {
			r.Changes.Set(name, true)
		}
		r.Comment = pick(phrases{
			fmt.Sprintf("Service %s has been %s, and is running", name, check),
			fmt.Sprintf("Service %s has been %s, and is in the desired state", name, check),
			fmt.Sprintf("Service %s has been %s, and is dead", name, check)})
		return
	}
	r.Result = states.False
	if on {
		r.Comment = pick(phrases{
			fmt.Sprintf("Failed when setting service %s to start at boot, but the service is running", name),
			fmt.Sprintf("Failed when setting service %s to start at boot, but the service was already running", name),
			fmt.Sprintf("Failed when setting service %s to start at boot, and the service is dead", name)})
		if err != nil {
			r.Comment += ". Additional information follows:\n\n" + strerror(err)
		}
		return
	}
	r.Comment = pick(phrases{
		fmt.Sprintf("Failed when setting service %s to not start at boot, and is running", name),
		fmt.Sprintf("Failed when setting service %s to not start at boot, but the service was already running", name),
		fmt.Sprintf("Failed when setting service %s to not start at boot, and the service is dead", name)})
}
