package service

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// Running is service.running.
func Running(ctx context.Context, c *states.Call) (*states.Result, error) {
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
			r.Comment = fmt.Sprintf("Service %s not present; if created in this state run, it would have been started", name)
		}
		return r, nil
	}
	before, err := s.bool("status", c.Arg("sig"))
	if err != nil {
		return nil, err
	}
	beforeEnabled := true
	if s.has("enabled") {
		if beforeEnabled, err = s.bool("enabled"); err != nil {
			return nil, err
		}
	}
	if before {
		r.Comment = fmt.Sprintf("The service %s is already running", name)
		switch {
		case setEnable && enable && !beforeEnabled:
			s.toggle(r, true, "none", true)
		case setEnable && !enable && beforeEnabled:
			s.toggle(r, false, "none", true)
		}
		return r, nil
	}
	if c.Env.Test {
		r.Result, r.Comment = states.None, fmt.Sprintf("Service %s is set to start", name)
		return r, nil
	}
	started, err := s.bool("start")
	if err != nil {
		r.Result, r.Comment = states.False, strerror(err)
		return r, nil
	}
	if !started {
		r.Result, r.Comment = states.False, fmt.Sprintf("Service %s failed to start", name)
		if setEnable {
			s.toggle(r, enable, "false", false)
		}
		return r, nil
	}
	sleep(ctx, c.Arg("init_delay"))
	after, err := s.bool("status", c.Arg("sig"))
	if err != nil {
		return nil, err
	}
	afterEnabled := true
	if s.has("enabled") {
		if afterEnabled, err = s.bool("enabled"); err != nil {
			return nil, err
		}
	}
	if (beforeEnabled != afterEnabled || before != after) && r.Changes.Len() == 0 {
		r.Changes.Set(name, after)
	}
	if after {
		r.Comment = fmt.Sprintf("Started service %s", name)
	} else {
		r.Result, r.Comment = states.False, fmt.Sprintf("Service %s failed to start", name)
	}
	if setEnable {
		s.toggle(r, enable, triStr(after), after)
	}
	if d := c.Arg("init_delay"); modules.Truthy(d) {
		r.Comment = fmt.Sprintf("%s\nDelayed return for %s seconds", r.Comment, delayStr(d))
	}
	return r, nil
}

func triStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// Dead is service.dead.
func Dead(ctx context.Context, c *states.Call) (*states.Result, error) {
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
			r.Comment = fmt.Sprintf("Service %s not present; if created in this state run, it would have been stopped", name)
		} else {
			r.Result = states.True
		}
		return r, nil
	}
	before, err := s.bool("status", c.Arg("sig"))
	if err != nil {
		return nil, err
	}
	beforeEnabled := true
	if s.has("enabled") {
		if beforeEnabled, err = s.bool("enabled"); err != nil {
			return nil, err
		}
	}
	if !before {
		r.Comment = fmt.Sprintf("The service %s is already dead", name)
		switch {
		case setEnable && enable && !beforeEnabled:
			s.toggle(r, true, "none", true)
		case setEnable && !enable && beforeEnabled:
			s.toggle(r, false, "none", true)
		}
		return r, nil
	}
	if c.Env.Test {
		r.Result, r.Comment = states.None, fmt.Sprintf("Service %s is set to be killed", name)
		return r, nil
	}
	stopped, err := s.bool("stop")
	if err != nil {
		return nil, err
	}
	if !stopped {
		r.Result, r.Comment = states.False, fmt.Sprintf("Service %s failed to die", name)
		if setEnable {
			s.toggle(r, enable, "true", false)
		}
		return r, nil
	}
	sleep(ctx, c.Arg("init_delay"))
	after, err := s.bool("status")
	if err != nil {
		return nil, err
	}
	afterEnabled := true
	if s.has("enabled") {
		if afterEnabled, err = s.bool("enabled"); err != nil {
			return nil, err
		}
	}
	if (beforeEnabled != afterEnabled || before != after) && r.Changes.Len() == 0 {
		r.Changes.Set(name, after)
	}
	if after {
		r.Result, r.Comment = states.False, fmt.Sprintf("Service %s failed to die", name)
	} else {
		r.Comment = fmt.Sprintf("Service %s was killed", name)
	}
	if setEnable {
		s.toggle(r, enable, triStr(after), !after)
	}
	return r, nil
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
