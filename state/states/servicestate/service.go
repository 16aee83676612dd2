// Package servicestate is Salt's `service` state module (salt/states/service.py):
// running, dead, enabled, disabled and mod_watch, which restarts a running
// service (or reloads it with reload: True) when a watched state changed.
// It works through the service execution functions, so it follows
// whichever init system the host's service module resolved to.
//
// Not supported: masked and unmasked are registered but always fail with
// Salt's "Service masking not available on this minion" (no service
// module here provides service.masked); the systemd-only keyword
// arguments (no_block, unmask, unmask_runtime) are not passed through,
// and there is no offline mode.
package servicestate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

func init() { Register(states.Default) }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

var runSpec = modules.Spec{Params: []modules.Param{{Name: "name"}, opt("enable", nil), opt("sig", nil), opt("init_delay", nil)}, VarKw: true}

// Register adds the service state functions to r.
func Register(r *states.Registry) {
	r.Register(states.Function{Name: "service.running", Spec: runSpec, Fn: Running})
	r.Register(states.Function{Name: "service.dead", Spec: runSpec, Fn: Dead})
	nameKw := modules.Spec{Params: []modules.Param{{Name: "name"}}, VarKw: true}
	r.Register(states.Function{Name: "service.enabled", Spec: nameKw, Fn: Enabled})
	r.Register(states.Function{Name: "service.disabled", Spec: nameKw, Fn: Disabled})
	mask := modules.Spec{Params: []modules.Param{{Name: "name"}, opt("runtime", false)}}
	r.Register(states.Function{Name: "service.masked", Spec: mask, Fn: notMaskable})
	r.Register(states.Function{Name: "service.unmasked", Spec: mask, Fn: notMaskable})
	r.Register(states.Function{Name: "service.mod_watch", Spec: modules.Spec{Params: []modules.Param{{Name: "name"},
		opt("sfun", nil), opt("sig", nil), opt("reload", false), opt("full_restart", false), opt("init_delay", nil),
		opt("force", false)}, VarKw: true}, Fn: ModWatch})
}

// svc calls service.<fun>(name, args...) and reports whether the module
// has the function at all.
type svc struct {
	ctx  context.Context
	c    *states.Call
	name string
}

func (s svc) has(fun string) bool {
	_, err := s.c.Env.Registry.Lookup(s.c.Env, "service."+fun)
	return err == nil
}

func (s svc) call(fun string, args ...any) (any, error) {
	return s.c.Env.Run(s.ctx, "service."+fun, append([]any{s.name}, args...), ordered.New())
}

func (s svc) bool(fun string, args ...any) (bool, error) {
	v, err := s.call(fun, args...)
	return modules.Truthy(v), err
}

// strerror is the message a state shows for a CommandExecutionError.
func strerror(err error) string {
	var ee *modules.ExecutionError
	if errors.As(err, &ee) {
		return ee.Msg
	}
	return err.Error()
}

// available is _available: service.available, else membership in
// service.get_all.
func (s svc) available(r *states.Result) (bool, error) {
	var ok bool
	var err error
	if s.has("available") {
		ok, err = s.bool("available")
	} else if s.has("get_all") {
		var all any
		all, err = s.c.Env.Run(s.ctx, "service.get_all", nil, ordered.New())
		if l, isList := all.([]any); isList {
			for _, x := range l {
				ok = ok || x == s.name
			}
		}
	}
	if err != nil {
		return false, err
	}
	if !ok {
		r.Result = states.False
		r.Comment = fmt.Sprintf("The named service %s is not available", s.name)
	}
	return ok, nil
}

// enableTri reads the enable argument: True, False or unset (None).
func enableTri(v any) (set bool, on bool) {
	switch x := v.(type) {
	case nil:
		return false, false
	case bool:
		return true, x
	case string:
		return true, strings.EqualFold(strings.TrimSpace(x), "true")
	}
	return true, modules.Truthy(v)
}

func enabledUsed(c *states.Call) *states.Result {
	if _, ok := c.Kwargs.Get("enabled"); !ok {
		return nil
	}
	return states.NewResult(c.Arg("name"), states.False,
		fmt.Sprintf(`Service %s uses non-existent option "enabled".  Perhaps "enable" option was intended?`, c.Str("name")))
}

func sleep(ctx context.Context, delay any) {
	var d time.Duration
	switch x := delay.(type) {
	case int:
		d = time.Duration(x) * time.Second
	case float64:
		d = time.Duration(x * float64(time.Second))
	}
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func delayStr(v any) string { return ordered.KeyString(v) }

func notMaskable(_ context.Context, c *states.Call) (*states.Result, error) {
	return states.NewResult(c.Arg("name"), states.False, "Service masking not available on this minion"), nil
}
