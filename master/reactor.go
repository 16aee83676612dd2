package master

import (
	"context"
	"errors"
	"fmt"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/reactor"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/modules"
)

// errNoReactor is the reactor runners' refusal when no reactor runs
// (salt/runners/reactor.py _reactor_system_available).
var errNoReactor = errors.New("Reactor system is not running.") //lint:ignore ST1005 Salt's CommandExecutionError text, shown by salt-run

// startReactor starts the reactor when the reactor option maps any
// tag (salt/master.py starts salt.utils.reactor.Reactor then): it
// follows the bus and hands each event to the reactor, which only
// matches the tag and queues it, so the bus never waits for a reaction.
func (m *Master) startReactor(ctx context.Context) {
	raw, ok := m.o.Raw.Get("reactor")
	if !ok || raw == nil || raw == "" {
		return
	}
	entries, err := reactor.ParseMap(raw)
	if err != nil {
		m.log.Error("reactor map not loaded, the reactor does not start", logattr.Err, err)
		return
	}
	log := m.log.With("component", "reactor")
	reactor.WarnRefreshInterval(m.o.Raw, log)
	env := m.minionEnv(ctx)
	r := reactor.New(reactor.Options{Map: entries, Workers: toInt(m.o.Raw.Value("reactor_worker_threads")),
		HWM: toInt(m.o.Raw.Value("reactor_worker_hwm")), FileRoots: m.o.FileRoots, Opts: m.o.Raw,
		Salt: modules.SaltFuncs{Env: env}, Grains: env.Grains,
		Niceness: toInt(m.o.Raw.Value("reactor_niceness")), Jinja: reactor.JinjaOptions(m.o.Raw),
		Exec: reactExec{m}, Log: log})
	m.reactor = r
	r.Start(ctx)
	ch, cancel := m.bus.Subscribe()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				r.Wait()
				return
			case ev := <-ch:
				r.Submit(ev.Tag, ev.Data)
			}
		}
	}()
	m.log.Info("reactor started", "reactions", len(entries))
}

func toInt(v any) int {
	n, _ := protocol.AsInt(v)
	return n
}

// Reactor is the running reactor, nil when the reactor option is empty.
func (m *Master) Reactor() *reactor.Reactor { return m.reactor }

// reactExec runs reactions through the master's own paths: a local
// reaction publishes a job as root (LocalClient.cmd_async), runner and
// wheel reactions run as jobs of the user "Reactor", so their events
// are not reacted to again (ReactWrap).
type reactExec struct{ m *Master }

func (e reactExec) React(ctx context.Context, c *reactor.Call) error {
	m := e.m
	switch c.Kind {
	case "local":
		_, _, err := m.Publish(ctx, PublishRequest{Tgt: c.Tgt, TgtType: c.TgtType, Fun: c.Fun, Arg: c.PublishArgs(),
			Ret: c.Ret, JID: c.JID, Metadata: c.Metadata})
		return err
	case "runner":
		_, err := m.runRunner(ctx, m.newJID(ctx), c.Fun, c.Arg, c.Kwarg, reactor.EventUser, false)
		return err
	case "wheel":
		ret := m.runWheel(ctx, m.newJID(ctx), c.Fun, c.Kwarg, reactor.EventUser)
		if data, ok := ret.Value("data").(*ordered.Map); ok && data.Value("success") == false {
			return fmt.Errorf("wheel %s: %v", c.Fun, data.Value("return"))
		}
		return nil
	case "caller":
		// salt.client.Caller runs the function on the reactor's own host
		// as a minion: a reaction of the minion's reactor engine
		// (engines: [reactor] in the minion config). Logged with Salt's
		// "Reactor '…' failed to execute caller '…'".
		return fmt.Errorf("caller reactions run in a minion's reactor engine (engines: [reactor] in the minion config), not on the master")
	}
	return fmt.Errorf("ReactWrap is missing a wrapper function for '%s'", c.Kind)
}

// reactorRunner is salt/runners/reactor.py.
func (m *Master) reactorRunner(fun string, args []any, kw *ordered.Map) (any, error) {
	r := m.reactor
	if r == nil {
		return nil, errNoReactor
	}
	pick := func(name string, pos int) (any, bool) {
		if v, ok := kw.Get(name); ok {
			return v, true
		}
		if pos < len(args) {
			return args[pos], true
		}
		return nil, false
	}
	switch fun {
	case "reactor.list":
		return r.List(), nil
	case "reactor.add":
		ev, ok1 := pick("event", 0)
		rs, ok2 := pick("reactors", 1)
		if !ok1 || !ok2 {
			return nil, errors.New("add() missing required positional arguments: 'event' and 'reactors'")
		}
		var sls []string
		switch x := rs.(type) {
		case []any:
			for _, s := range x {
				sls = append(sls, ordered.KeyString(s))
			}
		default:
			sls = []string{ordered.KeyString(x)}
		}
		return r.Add(ordered.KeyString(ev), sls), nil
	case "reactor.delete":
		ev, ok := pick("event", 0)
		if !ok {
			return nil, errors.New("delete() missing 1 required positional argument: 'event'")
		}
		return r.Delete(ordered.KeyString(ev)), nil
	case "reactor.is_leader":
		return r.IsLeader(), nil
	case "reactor.set_leader":
		v, ok := pick("value", 0)
		return r.SetLeader(!ok || modules.Truthy(v)), nil
	}
	return nil, &NoRunnerError{Fun: fun}
}

// eventSend is the event.send runner (salt/runners/event.py): fire tag
// with data (a mapping, or nothing) on the master bus; True.
func (m *Master) eventSend(args []any, kw *ordered.Map) (any, error) {
	tag, ok := kw.Value("tag").(string)
	if !ok && len(args) > 0 {
		tag, ok = args[0].(string)
	}
	if !ok || tag == "" {
		return nil, errors.New("send() missing 1 required positional argument: 'tag'")
	}
	var data any = kw.Value("data")
	if data == nil && len(args) > 1 {
		data = args[1]
	}
	if text, isText := data.(string); isText {
		// Salt's salt-run turns a '{"k": "v"}' argument into a mapping
		// (salt.utils.args.parse_input); Brine's passes it as text.
		data = saltyaml.ParseCLIArg(text)
	}
	dm, isMap := data.(*ordered.Map)
	if data != nil && !isMap {
		return nil, fmt.Errorf("event.send: data must be a mapping, not %T", data)
	}
	m.bus.Fire(tag, dm)
	return true, nil
}
