package master

import (
	"context"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// wheelFunc is one wheel function: it takes the call's keyword arguments
// and returns the function's return or the error Salt's function raises.
type wheelFunc func(m *Master, ctx context.Context, kw *ordered.Map) (any, error)

// wheelFuncs are the wheel functions the master has (salt/wheel/*.py).
var wheelFuncs = map[string]wheelFunc{
	"key.list_all": func(m *Master, _ context.Context, _ *ordered.Map) (any, error) {
		return m.pki.ListKeys().Map(), nil
	},
}

// HasWheel reports whether the master has the wheel function fun.
func (m *Master) HasWheel(fun string) bool {
	_, ok := wheelFuncs[fun]
	return ok
}

// runWheel runs a wheel function as ClearFuncs.wheel does: it fires
// salt/wheel/<jid>/new with {fun, jid, tag, user}, runs the function,
// fires salt/wheel/<jid>/ret with its return and success added, and
// answers {"tag": "salt/wheel/<jid>", "data": ...}. A function that
// fails has "Exception occurred in wheel <fun>: ..." as its return.
func (m *Master) runWheel(ctx context.Context, jid, fun string, kw *ordered.Map, user string) *ordered.Map {
	tag := "salt/wheel/" + jid
	data := ordered.FromPairs("fun", "wheel."+fun, "jid", jid, "tag", tag, "user", user)
	m.bus.Fire(tag+"/new", data)
	ret, err := wheelFuncs[fun](m, ctx, kw)
	if err != nil {
		data.Set("return", "Exception occurred in wheel "+fun+": "+err.Error())
		data.Set("success", false)
	} else {
		data.Set("return", ret)
		data.Set("success", true)
	}
	// fire_event sets _stamp in the caller's data, so the answer has
	// the ret event's.
	stamp := protocol.EventStamp(time.Now())
	data.Set("_stamp", stamp)
	m.bus.fireStamped(tag+"/ret", data, stamp)
	return ordered.FromPairs("tag", tag, "data", data)
}
