// Package grains is Salt's grains execution module (salt/modules/grains.py):
// reading grains with nested "a:b" keys, filter_by lookup tables, and
// setting static grains persisted to the grains file.
package grains

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// DefaultDelimiter is Salt's DEFAULT_TARGET_DELIM.
const DefaultDelimiter = ":"

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func reg(name, doc string, spec modules.Spec, fn modules.Func) {
	modules.Register(modules.Function{Name: "grains." + name, Doc: doc, Spec: spec, Fn: fn})
}

func params(p ...modules.Param) modules.Spec { return modules.Spec{Params: p} }

func init() {
	getSpec := params(req("key"), opt("default", ""), opt("delimiter", DefaultDelimiter), opt("ordered", true))
	reg("get", "Return the grain named key, where \"a:b\" walks nested dicts and lists; default when absent.", getSpec, get)
	reg("fetch", "Alias of grains.get, for use from Jinja.", getSpec, get)
	reg("has_value", "Report whether the (possibly nested \"a:b\") grain key exists.", params(req("key")),
		func(_ context.Context, c *modules.Call) (any, error) {
			_, ok := Traverse(c.Env.Grains(), c.Str("key"), DefaultDelimiter)
			return ok, nil
		})
	reg("items", "Return all grains; sanitize=True masks host names and serial numbers.", params(opt("sanitize", false)),
		func(_ context.Context, c *modules.Call) (any, error) {
			out := c.Env.Grains().Copy()
			if c.Bool("sanitize") {
				sanitize(out)
			}
			return out, nil
		})
	reg("item", "Return a dict of the named grains (nested keys allowed), with default, delimiter and sanitize keywords.",
		modules.Spec{VarArgs: true, VarKw: true}, item)
	reg("ls", "Return the sorted names of all grains.", params(),
		func(_ context.Context, c *modules.Call) (any, error) {
			keys := c.Env.Grains().StringKeys()
			sort.Strings(keys)
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = k
			}
			return out, nil
		})
	reg("equals", "Report whether str() of the grain key equals str() of value.", params(req("key"), req("value")),
		func(_ context.Context, c *modules.Call) (any, error) {
			v := get1(c.Env.Grains(), c.Str("key"), "", DefaultDelimiter)
			return py.Str(c.Arg("value")) == py.Str(v), nil
		})
	reg("filter_by", "Pick the entry of lookup_dict matching the grain (default os_family), merged over base and under merge.",
		params(req("lookup_dict"), opt("grain", "os_family"), opt("merge", nil), opt("default", "default"), opt("base", nil)),
		func(_ context.Context, c *modules.Call) (any, error) {
			return FilterBy(c.Arg("lookup_dict"), c.Str("grain"), c.Env.Grains(), c.Arg("merge"), c.Str("default"), c.Arg("base"))
		})
	registerWrite()
}

func get(_ context.Context, c *modules.Call) (any, error) {
	return get1(c.Env.Grains(), c.Str("key"), c.Arg("default"), c.Str("delimiter")), nil
}

func get1(data any, key string, def any, delim string) any {
	if v, ok := Traverse(data, key, delim); ok {
		return v
	}
	return def
}

func item(_ context.Context, c *modules.Call) (any, error) {
	def, ok := c.Kwargs.Get("default")
	if !ok {
		def = ""
	}
	delim, _ := c.Kwargs.Value("delimiter").(string)
	if delim == "" {
		delim = DefaultDelimiter
	}
	out := ordered.New()
	for _, a := range c.VarArgs {
		k := py.Str(a)
		out.Set(a, get1(c.Env.Grains(), k, def, delim))
	}
	if modules.Truthy(c.Kwargs.Value("sanitize")) {
		sanitize(out)
	}
	return out, nil
}

// sanitize masks the grains Salt's _SANITIZERS cover.
func sanitize(m *ordered.Map) {
	for _, k := range []string{"domain", "fqdn", "id", "host", "localhost", "nodename", "serialnumber"} {
		v, ok := m.Get(k)
		if !ok {
			continue
		}
		switch k {
		case "domain":
			m.Set(k, "DOMAINNAME")
		case "fqdn", "id":
			m.Set(k, "MINION.DOMAINNAME")
		case "host", "localhost", "nodename":
			m.Set(k, "MINION")
		case "serialnumber":
			s := py.Str(v)
			r := []rune(s)
			i := len(r) * 3 / 4
			m.Set(k, string(r[:i])+strings.Repeat("X", len(r)-i))
		}
	}
}

// Traverse walks data along key split by delim, as
// salt.utils.data.traverse_dict_and_list does: dict keys (retrying a
// key that YAML would read as a number or boolean), list indexes, and
// keys of dicts embedded in lists.
func Traverse(data any, key, delim string) (any, bool) {
	if delim == "" {
		delim = DefaultDelimiter
	}
	ptr := data
	for _, each := range strings.Split(key, delim) {
		next, ok := step(ptr, each)
		if !ok {
			return nil, false
		}
		ptr = next
	}
	return ptr, true
}

func step(ptr any, each string) (any, bool) {
	switch x := ptr.(type) {
	case []any:
		idx, isIdx := atoi(each)
		for _, e := range x {
			if m, ok := e.(*ordered.Map); ok {
				if isIdx {
					if v, ok := m.Get(idx); ok {
						return v, true
					}
				} else if v, ok := m.Get(each); ok {
					return v, true
				}
			}
		}
		if !isIdx {
			return nil, false
		}
		if idx < 0 {
			idx += len(x)
		}
		if idx < 0 || idx >= len(x) {
			return nil, false
		}
		return x[idx], true
	case *ordered.Map:
		if v, ok := x.Get(each); ok {
			return v, true
		}
		if alt, changed := yamlKey(each); changed {
			v, ok := x.Get(alt)
			return v, ok
		}
	}
	return nil, false
}

// yamlKey reads a key as YAML would (1 → int, true → bool), so that
// "a:1" finds {a: {1: x}}.
func yamlKey(s string) (any, bool) {
	if n, ok := atoi(s); ok {
		return n, true
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off":
		return false, true
	case "null", "~":
		return nil, true
	}
	return s, false
}

func atoi(s string) (int, bool) {
	var n int
	_, err := fmt.Sscan(s, &n)
	if err != nil || fmt.Sprint(n) != strings.TrimPrefix(s, "+") {
		return 0, false
	}
	return n, true
}
