package modules

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// DefaultCachedir is the minion's cachedir default on Linux.
const DefaultCachedir = "/var/cache/salt/minion"

// Env is what an execution function may see of the host and the job:
// Salt's __grains__, __pillar__, __opts__ and __salt__.
type Env struct {
	// grains are read through Grains, which gathers them on first use
	// when the Env was given a loader (SetGrainsFunc).
	grains   *lazyGrains
	Pillar   *ordered.Map
	Opts     *ordered.Map
	Registry *Registry
	// Test is the job's test=True flag.
	Test bool
	Log  *slog.Logger
	// Files reads salt:// URLs; nil when the job carries no file server.
	Files FileClient
	// PillarSource compiles the host's pillar for state runs; nil means
	// compiling it here from the pillar_roots option (masterless).
	PillarSource PillarSource
	// Context is the job's scratch space, Salt's __context__. A function
	// that sets Context["retcode"] to an int sets the job's retcode, as
	// cmd.run does with the command's exit status (salt/minion.py).
	Context map[string]any
	// Minion is the minion daemon running the job, which keeps grains
	// and pillar in memory between jobs; nil under salt-call and
	// salt-ssh, where every job gathers them afresh.
	Minion Refresher
	// MasterLink is the request channel to the master when the job runs
	// without a minion daemon (salt-call connected to a master); see
	// Env.Master.
	MasterLink MasterChannel
}

// lazyGrains holds grains gathered at most once, on first use: a job
// whose functions never read them (test.ping, cmd.run) skips the gather,
// which on a host without a grains cache runs systemctl and reads /proc,
// /sys and netlink. Copies of an Env share it.
type lazyGrains struct {
	once   sync.Once
	load   func() *ordered.Map
	m      *ordered.Map
	loaded atomic.Bool
}

// Grains returns the host's grains (Salt's __grains__), gathering them
// now if they were given as a loader and not yet read. It may be nil.
func (e *Env) Grains() *ordered.Map {
	if e == nil || e.grains == nil {
		return nil
	}
	g := e.grains
	g.once.Do(func() {
		if g.load != nil {
			g.m = g.load()
		}
		g.loaded.Store(true)
	})
	return g.m
}

// GrainsLoaded reports whether Grains has them at hand: given as a map,
// or gathered by an earlier call.
func (e *Env) GrainsLoaded() bool {
	return e != nil && e.grains != nil && e.grains.loaded.Load()
}

// SetGrains replaces the grains this Env (and not the copies it was made
// from) sees.
func (e *Env) SetGrains(g *ordered.Map) {
	lg := &lazyGrains{m: g}
	lg.once.Do(func() { lg.loaded.Store(true) })
	e.grains = lg
}

// WithGrains is SetGrains returning e, for building an Env in one
// expression.
func (e *Env) WithGrains(g *ordered.Map) *Env {
	e.SetGrains(g)
	return e
}

// SetGrainsFunc makes Grains call load on first use; load runs at most
// once for e and every copy of e made afterwards.
func (e *Env) SetGrainsFunc(load func() *ordered.Map) {
	e.grains = &lazyGrains{load: load}
}

// Refresher is the running minion's in-memory grains and pillar
// (salt/minion.py Minion: opts["grains"], opts["pillar"]), which
// saltutil.refresh_pillar, refresh_grains and grains.setval reload as
// Salt's do by firing pillar_refresh and module_refresh on the minion
// event bus.
type Refresher interface {
	// RefreshPillar gathers the grains again and compiles the pillar on
	// the master with them, which caches both for targeting
	// (Minion.pillar_refresh, whose module_refresh reloads the grains
	// first). On an error the minion keeps what it had.
	RefreshPillar(ctx context.Context) error
	// RefreshGrains gathers the grains again (Minion.module_refresh)
	// without asking the master for pillar.
	RefreshGrains(ctx context.Context) error
}

// FileClient fetches files from the Salt file server (salt://path).
type FileClient interface {
	// Get returns the bytes of url in saltenv, or an error wrapping
	// fs.ErrNotExist when the file is absent.
	Get(ctx context.Context, url, saltenv string) ([]byte, error)
}

// PillarSource compiles a host's pillar elsewhere, as Salt's
// RemotePillar asks the master with a _pillar request: override is the
// pillar= argument merged over the result, pillarenv the pillarenv
// option ("" for none).
type PillarSource interface {
	CompilePillar(ctx context.Context, override *ordered.Map, pillarenv string) (*ordered.Map, error)
}

// Call is one invocation of a function with its arguments bound to the
// signature: named parameters in Args (defaults filled in), the surplus
// positionals in VarArgs and surplus keywords in Kwargs.
type Call struct {
	Env     *Env
	Fun     *Function
	Args    map[string]any
	VarArgs []any
	Kwargs  *ordered.Map
	// Pub holds the keyword arguments whose names start with "__": Salt's
	// publish data (__pub_jid, __pub_fun, …). Salt's cmd module looks at
	// __pub_jid to tell a job's own call from a cross-module one.
	Pub *ordered.Map
}

// Arg returns the bound value of parameter name.
func (c *Call) Arg(name string) any { return c.Args[name] }

// Str returns parameter name as a string: strings as they are, other
// scalars as Python's str() prints them, nil as "".
func (c *Call) Str(name string) string {
	switch v := c.Args[name].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return ordered.KeyString(v)
	}
}

// Bool returns parameter name with Python truthiness.
func (c *Call) Bool(name string) bool { return Truthy(c.Args[name]) }

// Truthy reports Python's bool(v) for the value model.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case *ordered.Map:
		return x.Len() > 0
	}
	return true
}

// Run looks up name, binds args and kwargs and calls it.
func (e *Env) Run(ctx context.Context, name string, args []any, kwargs *ordered.Map) (any, error) {
	f, err := e.Registry.Lookup(e, name)
	if err != nil {
		return nil, err
	}
	c, err := f.Bind(e, args, kwargs)
	if err != nil {
		return nil, err
	}
	return f.Fn(ctx, c)
}

// ArgError is a call whose arguments do not fit the signature; its text
// follows salt/minion.py's "Passed invalid arguments to …".
type ArgError struct {
	Fun    string
	Reason string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("Passed invalid arguments to %s: %s", e.Fun, e.Reason)
}

// Bind matches args and kwargs to f's signature as Python would. Keyword
// names starting with "__" (Salt's __pub_* and similar) are dropped.
func (f *Function) Bind(env *Env, args []any, kwargs *ordered.Map) (*Call, error) {
	short := f.Name[strings.IndexByte(f.Name, '.')+1:]
	c := &Call{Env: env, Fun: f, Args: make(map[string]any, len(f.Spec.Params)), Kwargs: ordered.New(), Pub: ordered.New()}
	if len(args) > len(f.Spec.Params) && !f.Spec.VarArgs {
		return nil, &ArgError{f.Name, f.tooMany(short, len(args))}
	}
	for i, a := range args {
		if i < len(f.Spec.Params) {
			c.Args[f.Spec.Params[i].Name] = a
			continue
		}
		c.VarArgs = append(c.VarArgs, a)
	}
	var err error
	kwargs.Range(func(k, v any) bool {
		key := ordered.KeyString(k)
		if strings.HasPrefix(key, "__") {
			c.Pub.Set(key, v)
			return true
		}
		if f.hasParam(key) {
			if _, dup := c.Args[key]; dup {
				err = &ArgError{f.Name, fmt.Sprintf("%s() got multiple values for argument '%s'", short, key)}
				return false
			}
			c.Args[key] = v
			return true
		}
		if !f.Spec.VarKw {
			err = &ArgError{f.Name, fmt.Sprintf("%s() got an unexpected keyword argument '%s'", short, key)}
			return false
		}
		c.Kwargs.Set(key, v)
		return true
	})
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, p := range f.Spec.Params {
		if _, ok := c.Args[p.Name]; ok {
			continue
		}
		if !p.Optional {
			missing = append(missing, "'"+p.Name+"'")
			continue
		}
		c.Args[p.Name] = p.Default
	}
	if len(missing) > 0 {
		return nil, &ArgError{f.Name, fmt.Sprintf("%s() missing %s: %s", short,
			plural(len(missing), "required positional argument"), joinPython(missing))}
	}
	return c, nil
}

// tooMany words CPython's too_many_positional error: "ping() takes 0
// positional arguments but 1 was given", "retcode() takes from 0 to 1
// positional arguments but 2 were given".
func (f *Function) tooMany(short string, given int) string {
	n, defs := len(f.Spec.Params), 0
	for _, p := range f.Spec.Params {
		if p.Optional {
			defs++
		}
	}
	sig, noun := strconv.Itoa(n), "positional argument"
	if defs > 0 {
		sig = fmt.Sprintf("from %d to %d", n-defs, n)
	}
	if defs > 0 || n != 1 {
		noun += "s"
	}
	verb := "were"
	if given == 1 {
		verb = "was"
	}
	return fmt.Sprintf("%s() takes %s %s but %d %s given", short, sig, noun, given, verb)
}

func (f *Function) hasParam(name string) bool {
	for _, p := range f.Spec.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// joinPython joins names as CPython's argument errors do: 'a', 'b' and 'c'.
func joinPython(names []string) string {
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	return strings.Join(names[:len(names)-1], ", ") + ", and " + names[len(names)-1]
}

// Signature renders f's signature as Python's inspect would, for
// sys.argspec and usage messages: "echo(text)", "run(cmd, cwd=None, **kwargs)".
func (f *Function) Signature() string {
	var parts []string
	for _, p := range f.Spec.Params {
		if p.Optional {
			parts = append(parts, p.Name+"="+py.Repr(p.Default))
		} else {
			parts = append(parts, p.Name)
		}
	}
	if f.Spec.VarArgs {
		parts = append(parts, "*args")
	}
	if f.Spec.VarKw {
		parts = append(parts, "**kwargs")
	}
	return f.Name[strings.IndexByte(f.Name, '.')+1:] + "(" + strings.Join(parts, ", ") + ")"
}
