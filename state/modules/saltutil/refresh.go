package saltutil

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// The refresh functions reach the minion daemon running the job
// (modules.Env.Minion), as Salt's fire pillar_refresh and module_refresh
// on the minion event bus for salt/minion.py to handle. Where no daemon
// runs the job (salt-call, salt-ssh) there is nothing in memory to
// refresh and they return False, as Salt's event.fire does when no
// minion listens on the bus.

func registerRefresh() {
	reg("refresh_pillar", "Have the running minion gather its grains again and compile its pillar on the master with them (the master caches both for targeting); False when there is no running minion or the master cannot be reached.",
		refreshPillar, opt("wait", false), opt("timeout", 30), opt("clean_cache", true))
	reg("pillar_refresh", "Alias of saltutil.refresh_pillar.",
		refreshPillar, opt("wait", false), opt("timeout", 30), opt("clean_cache", true))
	modules.Register(modules.Function{Name: "saltutil.refresh_grains",
		Doc:  "Drop the grains cache and have the running minion gather its grains again, then refresh its pillar unless refresh_pillar=False; False when there is no running minion or the refresh failed.",
		Spec: modules.Spec{VarKw: true}, Fn: refreshGrains})
	modules.Register(modules.Function{Name: "saltutil.refresh_modules",
		Doc:  "Brine's modules are compiled in; have the running minion gather its grains again, as Salt's module refresh does. False when there is no running minion.",
		Spec: modules.Spec{VarKw: true}, Fn: refreshModules})
}

// refreshPillar is saltutil.refresh_pillar. Salt returns once the event
// is fired unless wait=True; Brine's minion refreshes before it
// answers, so a job published next sees the new pillar, bounded by
// timeout when wait=True. clean_cache applies to the master's
// pillar_cache, which Brine's master does not keep: every refresh
// compiles afresh.
func refreshPillar(ctx context.Context, c *modules.Call) (any, error) {
	if c.Bool("wait") {
		secs, err := seconds(c.Arg("timeout"))
		if err != nil {
			return nil, err
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, secs)
		defer cancel()
	}
	return doRefresh(ctx, c.Env, true), nil
}

// doRefresh has the running minion refresh its pillar (and so its
// grains) or only its grains, reporting whether it happened.
func doRefresh(ctx context.Context, env *modules.Env, pillar bool) bool {
	what := "grains"
	if pillar {
		what = "pillar"
	}
	if env.Minion == nil {
		env.Log.Warn("no running minion to refresh the " + what + " of: nothing was refreshed")
		return false
	}
	if !pillar {
		if err := env.Minion.RefreshGrains(ctx); err != nil {
			env.Log.Error("Grains could not be refreshed.", logattr.Err, err.Error())
			return false
		}
		return true
	}
	if err := env.Minion.RefreshPillar(ctx); err != nil {
		// salt/minion.py pillar_refresh's message for a failed compile.
		env.Log.Error("Pillar data could not be refreshed. One or more masters may be down!", logattr.Err, err.Error())
		return false
	}
	return true
}

// refreshGrains is saltutil.refresh_grains: refresh_pillar (default
// True) refreshes the pillar, which gathers the grains first, else only
// the grains are gathered; any other keyword is refused as Salt's
// invalid_kwargs does.
func refreshGrains(ctx context.Context, c *modules.Call) (any, error) {
	withPillar := true
	var bad []string
	c.Kwargs.Range(func(k, v any) bool {
		switch ks := fmt.Sprint(k); {
		case strings.HasPrefix(ks, "__"):
		case ks == "refresh_pillar":
			withPillar = modules.Truthy(v)
		case ks == "clean_pillar_cache":
		default:
			bad = append(bad, ks+"="+fmt.Sprint(v))
		}
		return true
	})
	if len(bad) > 0 {
		return nil, modules.Invalidf("The following keyword arguments are not valid: %s", strings.Join(bad, ", "))
	}
	dropGrainsCache(c.Env)
	return doRefresh(ctx, c.Env, withPillar), nil
}

// refreshModules is saltutil.refresh_modules: Salt reloads its modules
// and, with them, the grains.
func refreshModules(ctx context.Context, c *modules.Call) (any, error) {
	return doRefresh(ctx, c.Env, false), nil
}

// refreshAfterSync is the refresh=True of sync_grains and sync_all:
// Salt refreshes the pillar (and so the grains) whether or not anything
// was synced, and ignores the outcome in the sync's return.
func refreshAfterSync(ctx context.Context, c *modules.Call) {
	if v, ok := c.Args["refresh"]; ok && !modules.Truthy(v) {
		return
	}
	if c.Env.Minion == nil {
		return
	}
	doRefresh(ctx, c.Env, true)
}

func seconds(v any) (time.Duration, error) {
	switch x := v.(type) {
	case int:
		return time.Duration(x) * time.Second, nil
	case float64:
		return time.Duration(x * float64(time.Second)), nil
	}
	return 0, modules.Invalidf("timeout must be a number of seconds, not %s", py.Repr(v))
}
