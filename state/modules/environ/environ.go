// Package environ is Salt's environ execution module
// (salt/modules/environ.py): reading and setting the environment of the
// process that runs the job. Commands the job runs afterwards (cmd.run)
// inherit it.
//
// Brine's thin binary runs one job per process, as Salt's minion forks
// one per job, so a change lasts for the rest of the job only. A daemon
// that ran jobs in-process would share the change between them.
// update_minion (an event to the minion) and permanent (Windows
// registry) are accepted and ignored.
package environ

import (
	"context"
	"os"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func reg(name, doc string, fn modules.Func, p ...modules.Param) {
	modules.Register(modules.Function{Name: "environ." + name, Doc: doc, Spec: modules.Spec{Params: p}, Fn: fn})
}

func init() {
	reg("get", "Return the environment variable key, or default.", get, req("key"), opt("default", ""))
	reg("has_value", "Report whether key is set; with value, whether it is set to value.", hasValue,
		req("key"), opt("value", nil))
	reg("item", "Return {key: value} for one key or a list of keys, default for unset ones.", item,
		req("keys"), opt("default", ""))
	reg("items", "Return the whole environment as a dict.", func(context.Context, *modules.Call) (any, error) {
		return items(), nil
	})
	reg("setval", "Set key to the string val and return it; val=False sets \"\", or unsets the key (returning None) with false_unsets.",
		func(_ context.Context, c *modules.Call) (any, error) {
			return setval(c.Env, c.Arg("key"), c.Arg("val"), c.Arg("false_unsets") == true), nil
		}, req("key"), req("val"), opt("false_unsets", false), opt("permanent", false))
	reg("setenv", "Set several variables from a dict as environ.setval does, returning {key: result}; clear_all unsets every other variable.",
		setenv, req("environ"), opt("false_unsets", false), opt("clear_all", false), opt("update_minion", false),
		opt("permanent", false))
}

func get(_ context.Context, c *modules.Call) (any, error) {
	key, ok := c.Arg("key").(string)
	if !ok {
		return false, nil
	}
	if v, ok := os.LookupEnv(key); ok {
		return v, nil
	}
	return c.Arg("default"), nil
}

func hasValue(_ context.Context, c *modules.Call) (any, error) {
	key, ok := c.Arg("key").(string)
	if !ok {
		return false, nil
	}
	cur, ok := os.LookupEnv(key)
	if !ok {
		return false, nil
	}
	if v := c.Arg("value"); v != nil {
		return v == cur, nil
	}
	return true, nil
}

func item(_ context.Context, c *modules.Call) (any, error) {
	var keys []any
	switch k := c.Arg("keys").(type) {
	case string:
		keys = []any{k}
	case []any:
		keys = k
	default:
		c.Env.Log.Debug("environ: 'keys' argument is not a string or list type")
	}
	ret := ordered.New()
	for _, k := range keys {
		name := ordered.KeyString(k)
		if v, ok := os.LookupEnv(name); ok {
			ret.Set(k, v)
		} else {
			ret.Set(k, c.Arg("default"))
		}
	}
	return ret, nil
}

func items() *ordered.Map {
	env := os.Environ()
	sort.Strings(env)
	ret := ordered.New()
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			ret.Set(k, v)
		}
	}
	return ret
}

// setval is Salt's setval: the new value, None after an unset, False
// for a value that is neither a string nor False or a failed set.
func setval(env *modules.Env, key, val any, falseUnsets bool) any {
	k := ordered.KeyString(key)
	if val == false {
		if falseUnsets {
			if err := os.Unsetenv(k); err != nil {
				env.Log.Error("environ: unset failed", "key", k, logattr.Err, err.Error())
				return false
			}
			return nil
		}
		val = ""
	}
	s, ok := val.(string)
	if !ok {
		env.Log.Debug("environ: 'val' argument is not a string or False", "key", k)
		return false
	}
	if err := os.Setenv(k, s); err != nil {
		env.Log.Error("environ: set failed", "key", k, logattr.Err, err.Error())
		return false
	}
	return s
}

func setenv(_ context.Context, c *modules.Call) (any, error) {
	want, ok := c.Arg("environ").(*ordered.Map)
	if !ok {
		return false, nil
	}
	falseUnsets := c.Arg("false_unsets") == true
	ret := ordered.New()
	if c.Arg("clear_all") == true {
		for _, k := range items().StringKeys() {
			if !want.Has(k) {
				ret.Set(k, setval(c.Env, k, false, falseUnsets))
			}
		}
	}
	var bad bool
	want.Range(func(k, v any) bool {
		switch v.(type) {
		case string:
			ret.Set(k, setval(c.Env, k, v, false))
		case bool:
			if v == false {
				ret.Set(k, setval(c.Env, k, v, falseUnsets))
				return true
			}
			bad = true
		default:
			bad = true
		}
		return !bad
	})
	if bad {
		return false, nil
	}
	return ret, nil
}
