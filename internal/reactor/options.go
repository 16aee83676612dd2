package reactor

import (
	"log/slog"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/jinja"
	"github.com/brinesalt/brine/state/modules"
)

// JinjaOptions are the jinja_env (or top-level jinja_*) trim_blocks
// and lstrip_blocks settings of a daemon's options, which the
// reactor's templates are rendered with.
func JinjaOptions(opts *ordered.Map) jinja.Options {
	flag := func(key string) bool {
		if env, ok := opts.Value("jinja_env").(*ordered.Map); ok && env.Has(key) {
			return modules.Truthy(env.Value(key))
		}
		return modules.Truthy(opts.Value("jinja_" + key))
	}
	return jinja.Options{TrimBlocks: flag("trim_blocks"), LstripBlocks: flag("lstrip_blocks")}
}

// WarnRefreshInterval logs that reactor_refresh_interval has no effect
// when it is set. In Salt it is the age of ReactWrap's cache of client
// objects (LocalClient, RunnerClient, Wheel, Caller; a CacheDict of
// reactor_refresh_interval seconds), after which the clients are built
// again. Brine's reactions call the daemon's own publish, runner, wheel
// and function paths and cache no clients, so there is nothing to age.
// (Salt reads a reactor map given as a file at every event, whatever
// the option; Brine reads it once at start.)
func WarnRefreshInterval(opts *ordered.Map, log *slog.Logger) {
	if v, ok := opts.Get("reactor_refresh_interval"); ok && v != nil {
		log.Warn("reactor_refresh_interval is not supported: it ages Salt's cache of reaction clients, and Brine's reactor caches none (reactions call the daemon directly); ignored",
			"option", "reactor_refresh_interval", "value", v)
	}
}
