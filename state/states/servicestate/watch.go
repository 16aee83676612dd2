package servicestate

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// ModWatch is service.mod_watch: a watched state changed, so a running
// service is restarted (reloaded with reload: True, force-reloaded with
// force: True as well) and a stopped one started; for service.dead it is
// stopped.
func ModWatch(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, "")
	s := svc{ctx, c, name}
	sfun := c.Str("sfun")
	var fun, verb, past string
	switch sfun {
	case "dead":
		up, err := s.bool("status", c.Arg("sig"))
		if err != nil {
			return nil, err
		}
		if !up {
			r.Comment = "Service is already stopped"
			return r, nil
		}
		fun, verb, past = "stop", "stop", "stopped"
	case "running":
		up, err := s.bool("status", c.Arg("sig"))
		if err != nil {
			return nil, err
		}
		switch {
		case up && s.has("reload") && c.Bool("reload"):
			fun, verb = "reload", "reload"
			if s.has("force_reload") && c.Bool("force") {
				fun, verb = "force_reload", "forcefully reload"
			}
		case up && s.has("full_restart") && c.Bool("full_restart"):
			fun, verb = "full_restart", "fully restart"
		case up:
			fun, verb = "restart", "restart"
		default:
			fun, verb = "start", "start"
		}
		past = verb + "ed"
	default:
		r.Result, r.Comment = states.False, fmt.Sprintf("Unable to trigger watch for service.%s", sfun)
		return r, nil
	}
	if c.Env.Test {
		r.Result, r.Comment = states.None, fmt.Sprintf("Service is set to be %s", past)
		return r, nil
	}
	if verb == "start" && s.has("stop") {
		if _, err := s.call("stop"); err != nil {
			return nil, err
		}
	}
	v, err := s.call(fun)
	if err != nil {
		r.Result, r.Comment = states.False, strerror(err)
		return r, nil
	}
	sleep(ctx, c.Arg("init_delay"))
	ok := modules.Truthy(v)
	r.Changes = ordered.FromPairs(name, v)
	r.Result = states.TriOf(ok)
	if ok {
		r.Comment = "Service " + past
	} else {
		r.Comment = "Failed to " + verb + " the service"
	}
	return r, nil
}
