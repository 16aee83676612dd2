package saltutil

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/grains"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func reg(name, doc string, fn modules.Func, p ...modules.Param) {
	modules.Register(modules.Function{Name: "saltutil." + name, Doc: doc, Spec: modules.Spec{Params: p}, Fn: fn})
}

func itoa(n int) string { return strconv.Itoa(n) }

// syncForms are the sync_* functions and sync_all's keys, in its order.
var syncForms = []string{"clouds", "beacons", "modules", "states", "sdb", "grains", "renderers", "returners",
	"output", "utils", "log_handlers", "executors", "proxymodules", "engines", "thorium", "serializers", "matchers"}

func syncParams(form string) []modules.Param {
	p := []modules.Param{opt("saltenv", nil)}
	if form != "sdb" {
		p = append(p, opt("refresh", true))
	}
	return append(p, opt("extmod_whitelist", nil), opt("extmod_blacklist", nil))
}

func init() {
	reg("sync_grains", "Copy the custom grain executables of _grains/ into <extension_modules>/grains/; returns the grains.<name> entries added or changed.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			ret, err := syncGrains(ctx, c)
			if err == nil {
				refreshAfterSync(ctx, c)
			}
			return ret, err
		}, append(syncParams("grains"), opt("clean_pillar_cache", false))...)
	for _, form := range syncForms {
		if form == "grains" {
			continue
		}
		reg("sync_"+form, "Brine cannot load custom "+form+" (they are Python); returns [] and logs the _"+form+"/ files it skipped.",
			skipForm(form), syncParams(form)...)
	}
	reg("sync_pillar", "Brine cannot load custom pillar modules; returns [].", skipForm("pillar"), syncParams("pillar")...)
	reg("sync_all", "Run every sync_* function; returns {form: [synced]} (only grains can sync in Brine).", syncAll,
		opt("saltenv", nil), opt("refresh", true), opt("extmod_whitelist", nil), opt("extmod_blacklist", nil),
		opt("clean_pillar_cache", false))
	registerRefresh()
	reg("running", "Return the running jobs as [{arg, fun, jid, pid, ret, tgt, tgt_type, user}].",
		func(_ context.Context, c *modules.Call) (any, error) { return jobValues(registry(c.Env).List()), nil })
	reg("is_running", "Return the running jobs whose function matches the glob fun.", func(_ context.Context, c *modules.Call) (any, error) {
		var out []Job
		for _, j := range registry(c.Env).List() {
			if grains.Fnmatch(c.Str("fun"), j.Fun) {
				out = append(out, j)
			}
		}
		return jobValues(out), nil
	}, req("fun"))
	reg("find_job", "Return the running job jid, or {} when it is not running.", func(_ context.Context, c *modules.Call) (any, error) {
		if j, ok := registry(c.Env).Find(c.Str("jid")); ok {
			return j.Value(), nil
		}
		return ordered.New(), nil
	}, req("jid"))
	reg("signal_job", "Send signal sig to the job jid (in-process jobs are cancelled); returns what was done, or \"\".",
		func(_ context.Context, c *modules.Call) (any, error) {
			sig, err := parseSignal(c.Arg("sig"))
			if err != nil {
				return nil, err
			}
			return signalJob(c.Env, c.Str("jid"), sig), nil
		}, req("jid"), req("sig"))
	reg("term_job", "Send SIGTERM to the job jid.", func(_ context.Context, c *modules.Call) (any, error) {
		return signalJob(c.Env, c.Str("jid"), syscall.SIGTERM), nil
	}, req("jid"))
	reg("kill_job", "Send SIGKILL to the job jid.", func(_ context.Context, c *modules.Call) (any, error) {
		return signalJob(c.Env, c.Str("jid"), syscall.SIGKILL), nil
	}, req("jid"))
	reg("term_all_jobs", "Send SIGTERM to every running job.", allJobs(syscall.SIGTERM))
	reg("kill_all_jobs", "Send SIGKILL to every running job.", allJobs(syscall.SIGKILL))
	reg("clear_cache", "Remove every file under the cachedir; False when one cannot be removed.", clearCache)
	reg("clear_job_cache", "Remove job cache directories under <cachedir>/minion_jobs older than hours.", clearJobCache, opt("hours", 24))
	reg("list_extmods", "Return {form: [files]} of the synced extension modules.", listExtmods)
}

func jobValues(jobs []Job) []any {
	out := []any{}
	for _, j := range jobs {
		out = append(out, j.Value())
	}
	return out
}

func syncGrains(ctx context.Context, c *modules.Call) ([]any, error) {
	ret, err := syncForm(ctx, c.Env, "grains", newSyncArgs(c, "grains"))
	if err != nil {
		return nil, err
	}
	dropGrainsCache(c.Env)
	return ret, nil
}

func skipForm(form string) modules.Func {
	return func(_ context.Context, c *modules.Call) (any, error) {
		if files := skipped(c.Env, form, newSyncArgs(c, form).saltenvs); len(files) > 0 {
			c.Env.Log.Warn("Brine cannot load custom "+form+"; not synced", "files", strings.Join(files, ", "))
		}
		return []any{}, nil
	}
}

func syncAll(ctx context.Context, c *modules.Call) (any, error) {
	ret := ordered.New()
	for _, form := range syncForms {
		if form == "grains" {
			g, err := syncGrains(ctx, c)
			if err != nil {
				return nil, err
			}
			ret.Set(form, g)
			continue
		}
		v, _ := skipForm(form)(ctx, c)
		ret.Set(form, v)
	}
	if fc, _ := c.Env.Opts.Value("file_client").(string); fc == "local" {
		ret.Set("pillar", []any{})
	}
	refreshAfterSync(ctx, c)
	return ret, nil
}

// dropGrainsCache removes the cached core grains (state/coregrains keeps
// them in <cachedir>/grains.cache.json), as Salt removes grains.cache.p.
func dropGrainsCache(env *modules.Env) {
	cachedir, _ := env.Opts.Value("cachedir").(string)
	if cachedir == "" {
		return
	}
	for _, name := range []string{"grains.cache.json", "grains.cache.p"} {
		_ = os.Remove(filepath.Join(cachedir, name))
	}
}

func parseSignal(v any) (syscall.Signal, error) {
	switch x := v.(type) {
	case int:
		return syscall.Signal(x), nil
	case string:
		if n, err := strconv.Atoi(x); err == nil {
			return syscall.Signal(n), nil
		}
		if s, ok := signalNames[strings.TrimPrefix(strings.ToUpper(x), "SIG")]; ok {
			return s, nil
		}
	}
	return 0, modules.Invalidf("invalid signal %s", py.Repr(v))
}

func signalJob(env *modules.Env, jid string, sig syscall.Signal) string {
	r := registry(env)
	j, ok := r.Find(jid)
	if !ok {
		return ""
	}
	return r.Signal(j, sig)
}

func allJobs(sig syscall.Signal) modules.Func {
	return func(_ context.Context, c *modules.Call) (any, error) {
		r := registry(c.Env)
		out := []any{}
		for _, j := range r.List() {
			out = append(out, r.Signal(j, sig))
		}
		return out, nil
	}
}

func cachedir(env *modules.Env) string {
	if s, _ := env.Opts.Value("cachedir").(string); s != "" {
		return s
	}
	return modules.DefaultCachedir
}

func clearCache(_ context.Context, c *modules.Call) (any, error) {
	ok := true
	_ = filepath.WalkDir(cachedir(c.Env), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if err := os.Remove(p); err != nil {
			c.Env.Log.Error("Attempt to clear cache with saltutil.clear_cache FAILED", logattr.Err, err.Error())
			ok = false
			return filepath.SkipAll
		}
		return nil
	})
	return ok, nil
}

func clearJobCache(_ context.Context, c *modules.Call) (any, error) {
	hours := 24.0
	switch h := c.Arg("hours").(type) {
	case int:
		hours = float64(h)
	case float64:
		hours = h
	}
	threshold := time.Now().Add(-time.Duration(hours * float64(time.Hour)))
	root := filepath.Join(cachedir(c.Env), "minion_jobs")
	entries, err := os.ReadDir(root)
	if err != nil {
		return true, nil
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !e.IsDir() || !info.ModTime().Before(threshold) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			c.Env.Log.Error("Attempt to clear cache with saltutil.clear_job_cache FAILED", logattr.Err, err.Error())
			return false, nil
		}
	}
	return true, nil
}

func listExtmods(_ context.Context, c *modules.Call) (any, error) {
	ret := ordered.New()
	root := ExtmodsDir(c.Env.Opts)
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files := []any{}
		_ = filepath.WalkDir(filepath.Join(root, e.Name()), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(filepath.Join(root, e.Name()), p)
				files = append(files, e.Name()+"."+strings.ReplaceAll(strings.TrimSuffix(rel, filepath.Ext(rel)), "/", "."))
			}
			return nil
		})
		ret.Set(e.Name(), files)
	}
	return ret, nil
}
