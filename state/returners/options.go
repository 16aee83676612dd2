package returners

import (
	"errors"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/configmod"
)

// ErrUnknown is a returner name nothing registered.
var ErrUnknown = errors.New("no such returner")

// Options is salt/returners/__init__.py get_returner_options for a
// returner named name (see jobcache.ReturnerOptions), looking options up
// as config.option does: minion options, grains, pillar, master options.
func Options(env *modules.Env, name string, ret *ordered.Map, attrs []string, defaults map[string]any) map[string]any {
	return jobcache.ReturnerOptions(Lookup(env), []string{name}, ret, attrs, defaults)
}

// Lookup is config.option over env, for jobcache.ReturnerOptions.
func Lookup(env *modules.Env) jobcache.Lookup {
	return func(key string) any { return configmod.Option(env, key, nil) }
}
