package saltutil

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/cp"
)

// lister lists the file server as cp does.
func lister(env *modules.Env) cp.Lister {
	if l, ok := env.Files.(cp.Lister); ok {
		return l
	}
	return cp.RootsClient(env.Opts)
}

// files is Env.Files, else a client over the file_roots option.
func files(env *modules.Env) modules.FileClient {
	if env.Files != nil {
		return env.Files
	}
	return cp.RootsClient(env.Opts)
}

// filterList is an extmod_whitelist/extmod_blacklist argument or option
// for form: nil when none applies.
func filterList(v any, form string) map[string]bool {
	var names []any
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		for _, s := range strings.Split(x, ",") {
			names = append(names, s)
		}
	case *ordered.Map:
		l, ok := x.Value(form).([]any)
		if !ok {
			return nil
		}
		names = l
	default:
		return nil
	}
	set := map[string]bool{}
	for _, n := range names {
		set[ordered.KeyString(n)] = true
	}
	return set
}

type syncArgs struct {
	saltenvs     []string
	white, black map[string]bool
	cleanDynamic bool
	extmods      string
}

func newSyncArgs(c *modules.Call, form string) syncArgs {
	a := syncArgs{cleanDynamic: true, extmods: ExtmodsDir(c.Env.Opts)}
	envs := c.Arg("saltenv")
	if envs == nil {
		envs = c.Env.Opts.Value("saltenv")
	}
	switch e := envs.(type) {
	case string:
		a.saltenvs = strings.Split(e, ",")
	case []any:
		for _, x := range e {
			a.saltenvs = append(a.saltenvs, ordered.KeyString(x))
		}
	}
	if len(a.saltenvs) == 0 {
		a.saltenvs = []string{"base"}
	}
	white, black := c.Arg("extmod_whitelist"), c.Arg("extmod_blacklist")
	if white == nil {
		white = c.Env.Opts.Value("extmod_whitelist")
	}
	if black == nil {
		black = c.Env.Opts.Value("extmod_blacklist")
	}
	a.white, a.black = filterList(white, form), filterList(black, form)
	if v, ok := c.Env.Opts.Get("clean_dynamic_modules"); ok {
		a.cleanDynamic = v == true
	}
	return a
}

// syncForm copies _<form>/ of the file server into
// <extension_modules>/<form>/ as salt.utils.extmods.sync does and
// returns "<form>.<name>" for each file added or changed.
func syncForm(ctx context.Context, env *modules.Env, form string, a syncArgs) ([]any, error) {
	dir := filepath.Join(a.extmods, form)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, modules.Errorf("Cannot create cache module directory %s: %w", dir, err)
	}
	ret := []any{}
	remote := map[string]bool{}
	prefix := "_" + form + "/"
	for _, saltenv := range a.saltenvs {
		for _, f := range lister(env).FileList(saltenv) {
			rel, ok := strings.CutPrefix(f, prefix)
			if !ok {
				continue
			}
			name := strings.ReplaceAll(strings.TrimSuffix(rel, path.Ext(rel)), "/", ".")
			if (a.white != nil && !a.white[name]) || (a.black != nil && a.black[name]) {
				continue
			}
			remote[filepath.FromSlash(rel)] = true
			changed, err := copyModule(ctx, env, "salt://"+f, saltenv, filepath.Join(dir, filepath.FromSlash(rel)))
			if err != nil {
				return ret, err
			}
			if changed {
				ret = append(ret, form+"."+name)
			}
		}
	}
	if a.cleanDynamic {
		clean(dir, remote)
	}
	return ret, nil
}

// copyModule writes the file to dest, executable, when its contents
// differ; it reports whether it wrote.
func copyModule(ctx context.Context, env *modules.Env, url, saltenv, dest string) (bool, error) {
	data, err := files(env).Get(ctx, url, saltenv)
	if err != nil {
		return false, modules.Errorf("sync %s: %w", url, err)
	}
	if old, err := os.ReadFile(dest); err == nil && string(old) == string(data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return false, modules.Errorf("sync %s: %w", url, err)
	}
	tmp := dest + ".tmp"
	if err := os.WriteFile(tmp, data, 0o700); err != nil {
		return false, modules.Errorf("sync %s: %w", url, err)
	}
	if err := os.Chmod(tmp, 0o700); err != nil {
		return false, modules.Errorf("sync %s: %w", url, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return false, modules.Errorf("sync %s: %w", url, err)
	}
	return true, nil
}

// clean removes synced files that are no longer on the file server,
// then empty directories (clean_dynamic_modules).
func clean(dir string, keep map[string]bool) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel != "." {
				dirs = append(dirs, p)
			}
			return nil
		}
		if !keep[rel] {
			_ = os.Remove(p)
		}
		return nil
	})
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		_ = os.Remove(d)
	}
}

// skipped lists the files of _<form>/ that Brine cannot load, for
// sync_modules and friends to log.
func skipped(env *modules.Env, form string, saltenvs []string) []string {
	var out []string
	for _, e := range saltenvs {
		for _, f := range lister(env).FileList(e) {
			if strings.HasPrefix(f, "_"+form+"/") {
				out = append(out, f)
			}
		}
	}
	return out
}
