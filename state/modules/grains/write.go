package grains

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules"
)

func registerWrite() {
	reg("setvals", "Set several grains from a dict and persist them to the grains file; returns the dict.",
		params(req("grains"), opt("destructive", false), opt("refresh_pillar", true)),
		func(ctx context.Context, c *modules.Call) (any, error) {
			return setvals(ctx, c.Env, c.Arg("grains"), c.Bool("destructive"), c.Bool("refresh_pillar"))
		})
	reg("setval", "Set one grain and persist it to the grains file; returns {key: val}.",
		params(req("key"), req("val"), opt("destructive", false), opt("refresh_pillar", true)),
		func(ctx context.Context, c *modules.Call) (any, error) {
			return setvals(ctx, c.Env, ordered.FromPairs(c.Arg("key"), c.Arg("val")), c.Bool("destructive"), c.Bool("refresh_pillar"))
		})
	reg("append", "Append val to the list grain key (nested keys allowed), creating it; convert=True turns a scalar into a list.",
		params(req("key"), req("val"), opt("convert", false), opt("delimiter", DefaultDelimiter)), appendFn)
	reg("remove", "Remove val from the list grain key (nested keys allowed).",
		params(req("key"), req("val"), opt("delimiter", DefaultDelimiter)), remove)
	reg("delkey", "Remove the grain key entirely from the grains file.",
		params(req("key"), opt("force", false)),
		func(ctx context.Context, c *modules.Call) (any, error) {
			return set(ctx, c.Env, c.Str("key"), nil, c.Bool("force"), true, DefaultDelimiter)
		})
	reg("delval", "Set the grain key to None in the grains file; destructive=True removes the key.",
		params(req("key"), opt("destructive", false), opt("force", false)),
		func(ctx context.Context, c *modules.Call) (any, error) {
			return set(ctx, c.Env, c.Str("key"), nil, c.Bool("force"), c.Bool("destructive"), DefaultDelimiter)
		})
	reg("set", "Set a possibly nested grain key to val, refusing to overwrite dicts and lists unless force=True.",
		params(req("key"), opt("val", ""), opt("force", false), opt("destructive", false), opt("delimiter", DefaultDelimiter)),
		func(ctx context.Context, c *modules.Call) (any, error) {
			return set(ctx, c.Env, c.Str("key"), c.Arg("val"), c.Bool("force"), c.Bool("destructive"), c.Str("delimiter"))
		})
}

// setvals is grains.setvals: merge new into the grains file (top-level
// keys) and into the job's grains; with destructive, None deletes. Then,
// as Salt's calls saltutil.refresh_grains unless the job is --local,
// the running minion gathers its grains again and, with
// refreshPillar, refreshes its pillar, so that later jobs, the
// master's -G/-I targeting and pillar see the new value.
func setvals(ctx context.Context, env *modules.Env, v any, destructive, refreshPillar bool) (any, error) {
	newGrains, ok := v.(*ordered.Map)
	if !ok {
		//lint:ignore ST1005 Salt's exact message
		return nil, fmt.Errorf("SaltException: setvals grains must be a dictionary.")
	}
	path := coregrains.GrainsFilePath(env.Opts)
	file, err := coregrains.LoadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		file = ordered.New()
	} else if err != nil {
		return fmt.Sprintf("Unable to read existing grains file: %s", err), nil
	}
	newGrains.Range(func(k, val any) bool {
		if val == nil && destructive {
			file.Delete(k)
			env.Grains().Delete(k)
			return true
		}
		file.Set(k, val)
		env.Grains().Set(k, val)
		return true
	})
	if err := coregrains.SaveFile(path, file); err != nil {
		env.Log.Error("Unable to write to grains file. Check permissions.", "path", path, logattr.Err, err)
	}
	refresh(ctx, env, refreshPillar)
	return newGrains, nil
}

func appendFn(ctx context.Context, c *modules.Call) (any, error) {
	key, val, delim := c.Str("key"), c.Arg("val"), c.Str("delimiter")
	cur := get1(c.Env.Grains(), key, []any{}, delim)
	if c.Bool("convert") {
		if _, isList := cur.([]any); !isList {
			if cur == nil {
				cur = []any{}
			} else {
				cur = []any{cur}
			}
		}
	}
	list, ok := cur.([]any)
	if !ok {
		return fmt.Sprintf("The key %s is not a valid list", key), nil
	}
	list = ordered.DeepCopy(list).([]any)
	for _, e := range list {
		if ordered.Equal(e, val) {
			return fmt.Sprintf("The val %s was already in the list %s", py.Str(val), key), nil
		}
	}
	if vl, isList := val.([]any); isList {
		list = append(list, vl...)
	} else {
		list = append(list, val)
	}
	top, value := nest(c.Env.Grains(), key, list, delim)
	return setvals(ctx, c.Env, ordered.FromPairs(top, value), false, true)
}

func remove(ctx context.Context, c *modules.Call) (any, error) {
	key, val, delim := c.Str("key"), c.Arg("val"), c.Str("delimiter")
	list, ok := get1(c.Env.Grains(), key, []any{}, delim).([]any)
	if !ok {
		return fmt.Sprintf("The key %s is not a valid list", key), nil
	}
	idx := -1
	for i, e := range list {
		if ordered.Equal(e, val) {
			idx = i
			break
		}
	}
	if idx < 0 {
		return fmt.Sprintf("The val %s was not in the list %s", py.Str(val), key), nil
	}
	list = append(append([]any{}, list[:idx]...), list[idx+1:]...)
	top, value := nest(c.Env.Grains(), key, list, delim)
	return setvals(ctx, c.Env, ordered.FromPairs(top, value), false, true)
}

// nest rebuilds the top-level grain for a nested key whose leaf is now
// value, copying the existing dicts on the way up.
func nest(grains *ordered.Map, key string, value any, delim string) (string, any) {
	for strings.Contains(key, delim) {
		i := strings.LastIndex(key, delim)
		parent, rest := key[:i], key[i+len(delim):]
		m, ok := get1(grains, parent, nil, delim).(*ordered.Map)
		if ok {
			m = ordered.DeepCopy(m).(*ordered.Map)
		} else {
			m = ordered.New()
		}
		m.Set(rest, value)
		key, value = parent, m
	}
	return key, value
}

// refresh is the saltutil.refresh_grains call ending Salt's setvals;
// like Salt's, its outcome does not change setvals' return, so a
// failure is logged. salt-call and salt-ssh run no minion to refresh:
// their next job reads the grains file afresh.
func refresh(ctx context.Context, env *modules.Env, withPillar bool) {
	if env.Minion == nil || modules.Truthy(env.Opts.Value("local")) {
		return
	}
	fn, what := env.Minion.RefreshGrains, "Grains"
	if withPillar {
		fn, what = env.Minion.RefreshPillar, "Pillar data"
	}
	if err := fn(ctx); err != nil {
		env.Log.Error(what+" could not be refreshed after setting grains", logattr.Err, err.Error())
	}
}
