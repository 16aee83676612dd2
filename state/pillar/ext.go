package pillar

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
)

// ExtFunc is an external pillar: Salt's
// ext_pillar(minion_id, pillar, *args, **kwargs). It returns the data to
// merge, which should be a mapping; nil or an empty value adds nothing.
// An error becomes "Failed to load ext_pillar <name>: <error>" in
// `_errors`, as Salt reports an exception.
type ExtFunc func(ctx context.Context, x *ExtCall) (any, error)

// ExtPillar is a registered external pillar with its Python signature
// after minion_id and pillar, which decides how the ext_pillar option's
// value binds to it.
type ExtPillar struct {
	Name string
	// Params are the named positional parameters; all are required.
	Params []string
	// VarArgs accepts *args; VarKw accepts **kwargs.
	VarArgs, VarKw bool
	Fn             ExtFunc
}

// ExtCall is one call of an external pillar.
type ExtCall struct {
	MinionID string
	// Pillar is the pillar compiled so far; it must not be modified.
	Pillar  *ordered.Map
	Args    map[string]any
	VarArgs []any
	Kwargs  *ordered.Map
	// Opts are the compiling machine's options.
	Opts *ordered.Map
	// Compiler is the compilation calling the external pillar, for
	// external pillars that compile SLS files themselves (git).
	Compiler *Compiler
	Log      *slog.Logger
}

// Str returns the bound parameter name as a string.
func (x *ExtCall) Str(name string) string {
	switch v := x.Args[name].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return ordered.KeyString(v)
	}
}

// ExtRegistry maps ext_pillar names to external pillars. It is safe for
// concurrent use.
type ExtRegistry struct {
	mu sync.RWMutex
	m  map[string]*ExtPillar
}

// NewExtRegistry returns an empty registry.
func NewExtRegistry() *ExtRegistry { return &ExtRegistry{m: map[string]*ExtPillar{}} }

// DefaultExt holds the external pillars of this package (cmd_yaml,
// cmd_json, git) and any registered by other packages in init.
var DefaultExt = NewExtRegistry()

func init() {
	DefaultExt.Register(CmdYAML)
	DefaultExt.Register(CmdJSON)
	DefaultExt.Register(Git)
}

// Register adds p; a duplicate name is a programmer error and panics.
func (r *ExtRegistry) Register(p ExtPillar) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[p.Name]; dup {
		panic("pillar: duplicate ext_pillar " + p.Name)
	}
	r.m[p.Name] = &p
}

// Lookup returns the external pillar registered as name.
func (r *ExtRegistry) Lookup(name string) (*ExtPillar, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.m[name]
	return p, ok
}

// Names lists the registered names, sorted.
func (r *ExtRegistry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.m))
	for n := range r.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// bind binds an ext_pillar option value as Pillar._external_pillar_data
// passes it: a mapping as keyword arguments, a list as positional
// arguments, anything else as the one positional argument. Mismatches
// are worded as Python's TypeError.
func (p *ExtPillar) bind(val any) (args map[string]any, varArgs []any, kw *ordered.Map, err error) {
	args = map[string]any{}
	kw = ordered.New()
	var pos []any
	switch v := val.(type) {
	case *ordered.Map:
		v.Range(func(k, x any) bool {
			name := ordered.KeyString(k)
			switch {
			case p.hasParam(name):
				args[name] = x
			case p.VarKw:
				kw.Set(k, x)
			default:
				err = fmt.Errorf("ext_pillar() got an unexpected keyword argument '%s'", name)
				return false
			}
			return true
		})
		if err != nil {
			return nil, nil, nil, err
		}
	case []any:
		pos = v
	default:
		pos = []any{v}
	}
	if len(pos) > len(p.Params) && !p.VarArgs {
		return nil, nil, nil, fmt.Errorf("ext_pillar() takes %d positional arguments but %d were given", len(p.Params)+2, len(pos)+2)
	}
	for i, x := range pos {
		if i < len(p.Params) {
			args[p.Params[i]] = x
		} else {
			varArgs = append(varArgs, x)
		}
	}
	var missing []string
	for _, name := range p.Params {
		if _, ok := args[name]; !ok {
			missing = append(missing, "'"+name+"'")
		}
	}
	if len(missing) > 0 {
		return nil, nil, nil, fmt.Errorf("ext_pillar() missing %d required positional argument%s: %s",
			len(missing), plural(len(missing)), pyJoin(missing))
	}
	return args, varArgs, kw, nil
}

func (p *ExtPillar) hasParam(name string) bool {
	for _, n := range p.Params {
		if n == name {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// pyJoin joins names as Python's missing-argument message does:
// 'a', 'b' and 'c'.
func pyJoin(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

const malformedExt = `The "ext_pillar" option is malformed`

// extPillar runs the ext_pillar option's entries in order and merges each
// result over pillar (Pillar.ext_pillar).
func (c *Compiler) extPillar(ctx context.Context, s settings, pillar *ordered.Map, errs []string) (*ordered.Map, []string) {
	raw, ok := c.Opts.Get("ext_pillar")
	if !ok || c.noExt {
		return pillar, errs
	}
	runs, ok := raw.([]any)
	if !ok {
		c.log().Error(malformedExt)
		return pillar, append(errs, malformedExt)
	}
	if c.Override.Len() > 0 {
		pillar = s.strategy.Merge(pillar, c.Override)
	}
	exclude := map[string]bool{}
	if l, ok := c.Opts.Value("exclude_ext_pillar").([]any); ok {
		for _, x := range l {
			exclude[ordered.KeyString(x)] = true
		}
	}
	for _, r := range runs {
		run, ok := r.(*ordered.Map)
		if !ok {
			c.log().Error(malformedExt)
			return ordered.New(), append(errs, malformedExt)
		}
		if k, _, ok := compile.First(run); ok && exclude[k] {
			continue
		}
		var ext any
		run.Range(func(k, val any) bool {
			name := ordered.KeyString(k)
			data, err := c.callExt(ctx, name, val, pillar)
			if err != nil {
				errs = append(errs, fmt.Sprintf("Failed to load ext_pillar %s: %s", name, err.Error()))
				c.log().Error(fmt.Sprintf("Exception caught loading ext_pillar '%s': %s", name, err.Error()))
				return true
			}
			if data != nil {
				ext = data
			}
			return true
		})
		if !truthy(ext) {
			continue
		}
		m, ok := ext.(*ordered.Map)
		if !ok {
			// Salt's merge raises TypeError here and the whole compilation
			// fails; Brine keeps the other sources.
			errs = append(errs, fmt.Sprintf("Failed to merge ext_pillar %s: Cannot update using non-dict types in dictupdate.update()", ordered.KeyString(run.Keys()[0])))
			continue
		}
		pillar = s.strategy.Merge(pillar, m)
	}
	return pillar, errs
}

// callExt looks up and calls one external pillar; an unknown name is
// logged and skipped (nil, nil), as Salt does.
func (c *Compiler) callExt(ctx context.Context, name string, val any, pillar *ordered.Map) (data any, err error) {
	reg := c.Ext
	if reg == nil {
		reg = DefaultExt
	}
	p, ok := reg.Lookup(name)
	if !ok {
		c.log().Error(fmt.Sprintf("Specified ext_pillar interface %s is unavailable", name))
		return nil, nil
	}
	args, varArgs, kw, err := p.bind(val)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	id := c.MinionID
	if id == "" {
		// Masterless: the options are the minion's own.
		id, _ = c.Opts.Value("id").(string)
	}
	return p.Fn(ctx, &ExtCall{MinionID: id, Pillar: pillar, Args: args, VarArgs: varArgs, Kwargs: kw,
		Opts: c.Opts, Compiler: c, Log: c.log()})
}
