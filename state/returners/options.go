package returners

import (
	"errors"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/configmod"
)

// ErrUnknown is a returner name nothing registered.
var ErrUnknown = errors.New("no such returner")

// Options is salt/returners/__init__.py get_returner_options: for each
// attribute, the value under ret_config.<name>.<attr> when the job names
// a ret_config, else <name>: {attr: …} or the flat key <name>.<attr>
// (looked up as config.option does: minion options, grains, pillar,
// master options), else the default; then ret_kwargs override all.
// Like Salt, a falsy configured value counts as unset.
func Options(env *modules.Env, name string, ret *ordered.Map, attrs []string, defaults map[string]any) map[string]any {
	retConfig := ""
	if v, ok := ret.Get("ret_config"); ok && v != nil {
		retConfig = fmt.Sprint(v)
	}
	out := map[string]any{}
	for _, a := range attrs {
		if v := fetchOption(env, retConfig, name, a); modules.Truthy(v) {
			out[a] = v
		} else if d, ok := defaults[a]; ok {
			out[a] = d
		}
	}
	if kw, ok := ret.Value("ret_kwargs").(*ordered.Map); ok {
		kw.Range(func(k, v any) bool {
			out[ordered.KeyString(k)] = v
			return true
		})
	}
	return out
}

// fetchOption is get_returner_options' _fetch_option.
func fetchOption(env *modules.Env, retConfig, name, attr string) any {
	cfg := func(key string) any { return configmod.Option(env, key, nil) }
	sub := func(key string) *ordered.Map { m, _ := cfg(key).(*ordered.Map); return m }
	if retConfig != "" {
		v, ok := sub(retConfig + "." + name).Get(attr)
		if !ok {
			v = cfg(retConfig + "." + name + "." + attr)
		}
		if modules.Truthy(v) {
			return v
		}
	}
	if v, ok := sub(name).Get(attr); ok {
		return v
	}
	return cfg(name + "." + attr)
}
