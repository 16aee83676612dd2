// Package event is Salt's event execution module (salt/modules/event.py):
// event.fire on the minion's own event bus, event.fire_master onto the
// master's bus through the minion's request channel, and event.send,
// which picks one of them as Salt does (the local bus when masterless).
package event

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/modules"
)

// LocalBus is the running minion's event bus (Salt's minion IPC bus),
// which the minion's engines watch. The minion daemon provides it
// through modules.Env.Minion.
type LocalBus interface {
	// FireLocal fires tag with data on the bus and reports whether it
	// was fired.
	FireLocal(tag string, data *ordered.Map) bool
}

func init() {
	opt := func(name string) modules.Param { return modules.Param{Name: name, Optional: true} }
	optFalse := func(name string) modules.Param { return modules.Param{Name: name, Optional: true, Default: false} }
	for _, f := range []modules.Function{
		{Name: "event.fire", Doc: "Fire an event on the local minion event bus. Data must be formed as a dict.",
			Spec: modules.Spec{Params: []modules.Param{{Name: "data"}, {Name: "tag"}}}, Fn: fire},
		{Name: "event.fire_master", Doc: "Fire an event off up to the master server.",
			Spec: modules.Spec{Params: []modules.Param{{Name: "data"}, {Name: "tag"}, opt("preload")}}, Fn: fireMaster},
		{Name: "event.send", Doc: "Send an event to the Salt Master (the local bus when masterless), with optional grains, pillar, environment and keyword arguments in its data.",
			Spec: modules.Spec{Params: []modules.Param{{Name: "tag"}, opt("data"), opt("preload"), optFalse("with_env"),
				optFalse("with_grains"), optFalse("with_pillar"), optFalse("with_env_opts")}, VarKw: true}, Fn: send},
	} {
		modules.Register(f)
	}
}

// mapping is the data argument as a mapping: a mapping as it is, text
// loaded as the CLI would load it; anything else is not one.
func mapping(v any) (*ordered.Map, bool) {
	if s, ok := v.(string); ok {
		v = saltyaml.ParseCLIArg(s)
	}
	m, ok := v.(*ordered.Map)
	return m, ok
}

// fire is event.fire: False when there is no minion bus (salt-call
// beside no minion: Salt's IPC connect fails) or data is not a dict
// (fire_event's "Dict object expected", caught and logged at debug).
func fire(_ context.Context, c *modules.Call) (any, error) {
	return fireLocal(c.Env, c.Arg("data"), c.Str("tag")), nil
}

func fireLocal(env *modules.Env, data any, tag string) bool {
	bus, ok := env.Minion.(LocalBus)
	if !ok {
		env.Log.Debug("no minion event bus to fire on", "tag", tag)
		return false
	}
	m, ok := mapping(data)
	if !ok {
		env.Log.Debug(fmt.Sprintf("Dict object expected, not '%s'.", ordered.KeyString(data)), "tag", tag)
		return false
	}
	return bus.FireLocal(tag, m.Copy())
}

// masterless is Salt's local mode: local, file_client local (and, for
// send, master_type disable) without use_master_when_local.
func masterless(opts *ordered.Map, withMasterType bool) bool {
	if modules.Truthy(opts.Value("use_master_when_local")) {
		return false
	}
	return modules.Truthy(opts.Value("local")) || opts.Value("file_client") == "local" ||
		(withMasterType && opts.Value("master_type") == "disable")
}

// fireMaster is event.fire_master: the _minion_event load {id, tag,
// data, cmd} (with preload's keys) through the minion's channel; False
// when masterless (with Salt's warning) or when the send fails.
func fireMaster(ctx context.Context, c *modules.Call) (any, error) {
	return fireMasterData(ctx, c.Env, c.Arg("data"), c.Str("tag"), c.Arg("preload")), nil
}

func fireMasterData(ctx context.Context, env *modules.Env, data any, tag string, preload any) bool {
	opts := env.Opts
	if opts == nil {
		opts = ordered.New()
	}
	if masterless(opts, false) {
		env.Log.Warn(fmt.Sprintf("Local mode detected. Event with tag %s will NOT be sent.", tag))
		return false
	}
	ch, err := env.Master()
	if err != nil {
		env.Log.Info("Unable to send event to master", "tag", tag, "err", err.Error())
		return false
	}
	load := ordered.FromPairs("id", opts.Value("id"), "tag", tag, "data", data, "cmd", protocol.CmdMinionEvent)
	if pm, ok := preload.(*ordered.Map); ok {
		pm.Range(func(k, v any) bool { load.Set(k, v); return true })
	}
	if _, err := ch.MasterRequest(ctx, load); err != nil {
		env.Log.Info("Unable to send event to master", "tag", tag, "err", err.Error())
		return false
	}
	return true
}

// send is event.send: the data built from the with_* switches and the
// keyword arguments, data's own keys over them.
func send(ctx context.Context, c *modules.Call) (any, error) {
	d := ordered.New()
	if v := c.Arg("with_env"); modules.Truthy(v) {
		d.Set("environ", subset(v, environ()))
	}
	if v := c.Arg("with_grains"); modules.Truthy(v) {
		d.Set("grains", subset(v, orEmpty(c.Env.Grains())))
	}
	if v := c.Arg("with_pillar"); modules.Truthy(v) {
		d.Set("pillar", subset(v, orEmpty(c.Env.Pillar)))
	}
	opts := c.Env.Opts
	if opts == nil {
		opts = ordered.New()
	}
	if c.Bool("with_env_opts") {
		saltenv := opts.Value("saltenv")
		if saltenv == nil {
			saltenv = "base"
		}
		d.Set("saltenv", saltenv)
		d.Set("pillarenv", opts.Value("pillarenv"))
	}
	if c.Kwargs != nil {
		c.Kwargs.Range(func(k, v any) bool { d.Set(k, v); return true })
	}
	if m, ok := mapping(c.Arg("data")); ok {
		m.Range(func(k, v any) bool { d.Set(k, v); return true })
	}
	tag := c.Str("tag")
	if masterless(opts, true) {
		return fireLocal(c.Env, d, tag), nil
	}
	return fireMasterData(ctx, c.Env, d, tag, c.Arg("preload")), nil
}

// subset is _dict_subset: with a list, only those keys of m (the
// present ones); otherwise all of m.
func subset(sel any, m *ordered.Map) *ordered.Map {
	keys, ok := sel.([]any)
	if !ok {
		return m.Copy()
	}
	out := ordered.New()
	for _, k := range keys {
		if v, has := m.Get(k); has {
			out.Set(k, v)
		}
	}
	return out
}

func orEmpty(m *ordered.Map) *ordered.Map {
	if m == nil {
		return ordered.New()
	}
	return m
}

func environ() *ordered.Map {
	out := ordered.New()
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out.Set(k, v)
		}
	}
	return out
}
