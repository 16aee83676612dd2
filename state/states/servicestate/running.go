package servicestate

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// direction holds what differs between service.running and service.dead.
type direction struct {
	running bool
	// action is the execution function that gets there.
	action string
	// absent is the participle of the test-mode comment for a service
	// that does not exist yet.
	absent                         string
	already, set, failed, achieved string
}

var (
	toRunning = direction{running: true, action: "start", absent: "started",
		already: "The service %s is already running", set: "Service %s is set to start",
		failed: "Service %s failed to start", achieved: "Started service %s"}
	toDead = direction{action: "stop", absent: "stopped",
		already: "The service %s is already dead", set: "Service %s is set to be killed",
		failed: "Service %s failed to die", achieved: "Service %s was killed"}
)

// Running is service.running.
func Running(ctx context.Context, c *states.Call) (*states.Result, error) {
	return converge(ctx, c, toRunning)
}

// Dead is service.dead.
func Dead(ctx context.Context, c *states.Call) (*states.Result, error) {
	return converge(ctx, c, toDead)
}

// status is the service's running state and, when the module can tell,
// whether it is enabled.
func (s svc) status(sig any) (up, enabled bool, err error) {
	if up, err = s.bool("status", sig); err != nil {
		return false, false, err
	}
	enabled = true
	if s.has("enabled") {
		enabled, err = s.bool("enabled")
	}
	return up, enabled, err
}

// converge is the shared body of running and dead (salt/states/service.py
// keeps two copies of it).
func converge(ctx context.Context, c *states.Call, d direction) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, "")
	if res := enabledUsed(c); res != nil {
		return res, nil
	}
	setEnable, enable := enableTri(c.Arg("enable"))
	s := svc{ctx, c, name}
	ok, err := s.available(r)
	if err != nil {
		r.Result, r.Comment = states.False, strerror(err)
		return r, nil
	}
	if !ok {
		if c.Env.Test {
			r.Result = states.None
			r.Comment = fmt.Sprintf("Service %s not present; if created in this state run, it would have been %s", name, d.absent)
		} else if !d.running {
			r.Result = states.True
		}
		return r, nil
	}
	before, beforeEnabled, err := s.status(c.Arg("sig"))
	if err != nil {
		return nil, err
	}
	if before == d.running {
		r.Comment = fmt.Sprintf(d.already, name)
		switch {
		case setEnable && enable && !beforeEnabled:
			s.toggle(r, true, "none", true)
		case setEnable && !enable && beforeEnabled:
			s.toggle(r, false, "none", true)
		}
		return r, nil
	}
	if c.Env.Test {
		r.Result, r.Comment = states.None, fmt.Sprintf(d.set, name)
		return r, nil
	}
	done, err := s.bool(d.action)
	if err != nil && d.running {
		r.Result, r.Comment = states.False, strerror(err)
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	if !done {
		r.Result, r.Comment = states.False, fmt.Sprintf(d.failed, name)
		if setEnable {
			s.toggle(r, enable, triStr(!d.running), false)
		}
		return r, nil
	}
	return settle(ctx, c, s, d, r, before, beforeEnabled, setEnable, enable)
}

// settle waits init_delay, reads the outcome and applies enable.
func settle(ctx context.Context, c *states.Call, s svc, d direction, r *states.Result, before, beforeEnabled, setEnable, enable bool) (*states.Result, error) {
	sleep(ctx, c.Arg("init_delay"))
	var sig any
	if d.running {
		sig = c.Arg("sig") // service.dead checks without the signature, as Salt does
	}
	after, afterEnabled, err := s.status(sig)
	if err != nil {
		return nil, err
	}
	if (beforeEnabled != afterEnabled || before != after) && r.Changes.Len() == 0 {
		r.Changes.Set(s.name, after)
	}
	if after == d.running {
		r.Comment = fmt.Sprintf(d.achieved, s.name)
	} else {
		r.Result, r.Comment = states.False, fmt.Sprintf(d.failed, s.name)
	}
	if setEnable {
		s.toggle(r, enable, triStr(after), after == d.running)
	}
	if delay := c.Arg("init_delay"); d.running && modules.Truthy(delay) {
		r.Comment = fmt.Sprintf("%s\nDelayed return for %s seconds", r.Comment, delayStr(delay))
	}
	return r, nil
}

func triStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// Enabled is service.enabled.
func Enabled(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, "")
	svc{ctx, c, name}.toggle(r, true, "none", true)
	if c.Env.Test && r.Comment == fmt.Sprintf("The named service %s is not available", name) {
		r.Result = states.None
		r.Comment = fmt.Sprintf("Service %s not present; if created in this state run, it would have been enabled", name)
	}
	return r, nil
}

// Disabled is service.disabled.
func Disabled(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, "")
	svc{ctx, c, name}.toggle(r, false, "none", true)
	return r, nil
}
