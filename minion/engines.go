package minion

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/jid"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/reactor"
	"github.com/brinesalt/brine/state/modules/event"
)

var _ event.LocalBus = (*Minion)(nil)

// engine is one item of the engines option: the engine's name, the
// module it runs (engine_module, else the name) and its options.
type engine struct {
	name, module string
	conf         *ordered.Map
}

// parseEngines reads the engines option as salt/engines/__init__.py
// start_engines does: a list of names or one-key {name: {options}}
// mappings, or a mapping of names to options; engine_module in an
// engine's options names the module it runs.
func parseEngines(v any) []engine {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case *ordered.Map:
		x.Range(func(k, val any) bool { items = append(items, ordered.FromPairs(k, val)); return true })
	}
	var out []engine
	for _, it := range items {
		e := engine{}
		switch x := it.(type) {
		case string:
			e.name = x
		case *ordered.Map:
			if x.Len() == 0 {
				continue
			}
			k := x.Keys()[0]
			e.name = ordered.KeyString(k)
			e.conf, _ = x.Value(k).(*ordered.Map)
		default:
			continue
		}
		e.module = e.name
		if mod, ok := e.conf.Value("engine_module").(string); ok && mod != "" {
			e.module = mod
			e.conf = e.conf.Copy()
			e.conf.Delete("engine_module")
		}
		out = append(out, e)
	}
	return out
}

// startEngines starts the engines the minion has (Minion's
// start_engines): reactor, the minion-side reactor of
// salt/engines/reactor.py. Any other engine is logged as not supported.
func (m *Minion) startEngines(ctx context.Context, wg *sync.WaitGroup) {
	for _, e := range parseEngines(m.opts.Value("engines")) {
		if e.module != "reactor" {
			m.log.Warn("engine not supported by Brine's minion, not started", "engine", e.name, "engine_module", e.module)
			continue
		}
		r := m.newReactor(ctx, e)
		if r == nil {
			continue
		}
		r.Start(ctx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ctx.Done()
			r.Wait()
		}()
		m.log.Info(fmt.Sprintf("Starting Engine(salt.engines.%s, name=%s)", e.module, e.name))
	}
}

// newReactor builds the reactor engine over the minion's reactor map:
// refresh_interval, worker_threads and worker_hwm in the engine's
// options override the reactor_* options, as the engine's start() does.
func (m *Minion) newReactor(ctx context.Context, e engine) *reactor.Reactor {
	opts := m.opts.Copy()
	for k, o := range map[string]string{"refresh_interval": "reactor_refresh_interval", "worker_threads": "reactor_worker_threads", "worker_hwm": "reactor_worker_hwm"} {
		if v, ok := e.conf.Get(k); ok && v != nil {
			opts.Set(o, v)
		}
	}
	raw, _ := opts.Get("reactor")
	entries, err := reactor.ParseMap(raw)
	if err != nil {
		m.log.Error("reactor map not loaded, the reactor engine does not start", logattr.Err, err)
		return nil
	}
	workers, _ := protocol.AsInt(opts.Value("reactor_worker_threads"))
	hwm, _ := protocol.AsInt(opts.Value("reactor_worker_hwm"))
	niceness, _ := protocol.AsInt(opts.Value("reactor_niceness"))
	log := m.log.With("component", "reactor")
	reactor.WarnRefreshInterval(opts, log)
	r := reactor.New(reactor.Options{Map: entries, Workers: workers, HWM: hwm, Niceness: niceness,
		FileRoots: fileRoots(opts), Opts: opts, Jinja: reactor.JinjaOptions(opts),
		Salt: minionFuncs{m}, Grains: m.grainsCopy, Exec: callerExec{m}, Log: log})
	m.schedMu.Lock()
	m.reactor = r
	m.schedMu.Unlock()
	return r
}

// FireLocal fires an event on the minion's own bus (event.fire): the
// reactor engine, when it runs, sees it. The data gets Salt's _stamp.
func (m *Minion) FireLocal(tag string, data *ordered.Map) bool {
	if data == nil {
		data = ordered.New()
	}
	data.Set("_stamp", protocol.EventStamp(time.Now()))
	m.schedMu.Lock()
	r := m.reactor
	m.schedMu.Unlock()
	if r != nil {
		r.Submit(tag, data)
	}
	return true
}

// grainsCopy is the minion's grains, for the reactor's templates.
func (m *Minion) grainsCopy() *ordered.Map {
	m.dataMu.RLock()
	defer m.dataMu.RUnlock()
	if m.grains == nil {
		return ordered.New()
	}
	return m.grains.Copy()
}

// fileRoots is the file_roots option ({saltenv: [dir, ...]}), Salt's
// /srv/salt by default: the reactor engine's MasterMinion reads salt://
// references with file_client local.
func fileRoots(opts *ordered.Map) map[string][]string {
	out := map[string][]string{}
	roots, _ := opts.Value("file_roots").(*ordered.Map)
	roots.Range(func(k, v any) bool {
		dirs, _ := v.([]any)
		for _, d := range dirs {
			if s, ok := d.(string); ok {
				out[ordered.KeyString(k)] = append(out[ordered.KeyString(k)], s)
			}
		}
		return true
	})
	if len(out) == 0 {
		out["base"] = []string{"/srv/salt"}
	}
	return out
}

// minionFuncs is `salt` in the reactor's templates: the minion's
// execution functions, run as the minion runs a job's.
type minionFuncs struct{ m *Minion }

func (f minionFuncs) Call(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	return f.m.call(ctx, fun, args, kw)
}

// call runs an execution function in the minion (as salt.client.Caller
// does: no job published, no return sent) and answers its return, or
// an error carrying it when the function failed.
func (m *Minion) call(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	res := m.execute(ctx, jid.New(time.Now()), fun, args, kw)
	if res.Retcode != 0 {
		if s, ok := res.Return.(string); ok {
			return nil, errors.New(s)
		}
		return nil, fmt.Errorf("%s: retcode %d", fun, res.Retcode)
	}
	return res.Return, nil
}

// callerExec runs the minion reactor's reactions: caller reactions run
// the function on this minion (ReactWrap.caller, salt.client.Caller.cmd
// with the reaction's arg and kwarg). local, runner and wheel reactions
// need a master's clients, which a Brine minion does not have.
type callerExec struct{ m *Minion }

func (e callerExec) React(ctx context.Context, c *reactor.Call) error {
	if c.Kind != "caller" {
		return fmt.Errorf("%s reactions need a master; Brine's minion reactor runs caller reactions", c.Kind)
	}
	ret, err := e.m.call(ctx, c.Fun, c.Arg, c.Kwarg)
	if err != nil {
		return fmt.Errorf("caller %s: %w", c.Fun, err)
	}
	e.m.log.Debug("caller reaction ran", logattr.Fun, c.Fun, "return", ordered.KeyString(ret))
	return nil
}
