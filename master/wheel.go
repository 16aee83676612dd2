package master

import (
	"context"
	"fmt"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/modules"
)

// wheelFunc is one wheel function: it takes the call's keyword arguments
// and returns the function's return or the error Salt's function raises.
type wheelFunc func(m *Master, ctx context.Context, kw wheelArgs) (any, error)

// wheelFuncs are the wheel functions the master has (salt/wheel/key.py,
// config.py, minions.py), filled by the files that define them.
var wheelFuncs = map[string]wheelFunc{}

func registerWheel(name string, f wheelFunc) {
	if _, dup := wheelFuncs[name]; dup {
		panic("master: wheel function " + name + " registered twice")
	}
	wheelFuncs[name] = f
}

// HasWheel reports whether the master has the wheel function fun.
func (m *Master) HasWheel(fun string) bool {
	_, ok := wheelFuncs[fun]
	return ok
}

// Wheel runs a wheel function as the local root user would, without
// eauth, and returns its return; a function that fails is an error.
func (m *Master) Wheel(ctx context.Context, fun string, kw *ordered.Map) (any, error) {
	f, ok := wheelFuncs[fun]
	if !ok {
		return nil, &NoRunnerError{Fun: fun}
	}
	if kw == nil {
		kw = ordered.New()
	}
	return f(m, ctx, wheelArgs{fun: fun, kw: kw})
}

// runWheel runs a wheel function as ClearFuncs.wheel does: it fires
// salt/wheel/<jid>/new with {fun, jid, tag, user}, runs the function,
// fires salt/wheel/<jid>/ret with its return and success added, and
// answers {"tag": "salt/wheel/<jid>", "data": ...}. A function that
// fails has "Exception occurred in wheel <fun>: ..." as its return.
// The job is stored in the job cache as WheelClient.low stores it (Salt
// stores it under a second jid of low()'s own; Brine uses the one).
func (m *Master) runWheel(ctx context.Context, jid, fun string, kw *ordered.Map, user string) *ordered.Map {
	tag := "salt/wheel/" + jid
	data := ordered.FromPairs("fun", "wheel."+fun, "jid", jid, "tag", tag, "user", user)
	m.bus.Fire(tag+"/new", data)
	ret, err := m.Wheel(ctx, fun, kw)
	if err != nil {
		data.Set("return", "Exception occurred in wheel "+fun+": "+err.Error())
		data.Set("success", false)
	} else {
		data.Set("return", ret)
		data.Set("success", true)
	}
	m.storeWheelJob(jid, data, kw)
	// fire_event sets _stamp in the caller's data, so the answer has
	// the ret event's.
	stamp := protocol.EventStamp(time.Now())
	data.Set("_stamp", stamp)
	m.bus.fireStamped(tag+"/ret", data, stamp)
	m.log.Info("wheel completed", logattr.JID, jid, logattr.Fun, fun, logattr.User, user)
	return ordered.FromPairs("tag", tag, "data", data)
}

// storeWheelJob is store_job for a wheel call: as a runner's, with the
// call's arguments as fun_args.
func (m *Master) storeWheelJob(jid string, data, kw *ordered.Map) {
	job := data.Copy()
	job.Delete("tag")
	funArgs := []any{}
	if kw.Len() > 0 {
		funArgs = append(funArgs, kw)
	}
	job.Set("fun_args", funArgs)
	m.storeRunnerJob(jid, job)
}

// wheelArgs are a wheel call's keyword arguments, read as the Python
// function's parameters would be.
type wheelArgs struct {
	fun string
	kw  *ordered.Map
}

// required is a parameter without a default; a call without it fails as
// salt.utils.args.format_call fails.
func (a wheelArgs) required(name, pyName string, n int) (any, error) {
	v, ok := a.kw.Get(name)
	if !ok {
		s := ""
		if n > 1 {
			s = "s"
		}
		return nil, fmt.Errorf("%s takes at least %d argument%s (0 given)", pyName, n, s)
	}
	return v, nil
}

func (a wheelArgs) str(name, def string) string {
	v, ok := a.kw.Get(name)
	if !ok || v == nil {
		return def
	}
	return ordered.KeyString(v)
}

// flag is a boolean parameter, with Python's truth.
func (a wheelArgs) flag(name string) bool { return modules.Truthy(a.kw.Value(name)) }

// integer is an int parameter; a numeric string is accepted too (form
// bodies carry strings).
func (a wheelArgs) integer(name string, def int) (int, error) {
	v, ok := a.kw.Get(name)
	if !ok || v == nil {
		return def, nil
	}
	if n, ok := ordered.Number(v); ok && n == float64(int(n)) {
		return int(n), nil
	}
	var n int
	if s, ok := v.(string); ok {
		if _, err := fmt.Sscan(s, &n); err == nil && fmt.Sprint(n) == s {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: %s must be an integer, not %v", a.fun, name, v)
}
