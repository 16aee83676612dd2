package cp

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/modules/grains"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func reg(name, doc string, fn modules.Func, varKw bool, p ...modules.Param) {
	modules.Register(modules.Function{Name: "cp." + name, Doc: doc, Spec: modules.Spec{Params: p, VarKw: varKw}, Fn: fn})
}

func emptyMap() *ordered.Map { return ordered.New() }

func mapOf(kv ...any) *ordered.Map { return ordered.FromPairs(kv...) }

func strs(s []string) []any {
	out := []any{}
	for _, x := range s {
		out = append(out, x)
	}
	return out
}

func init() {
	reg("get_file", "Copy a salt:// file to dest (a directory keeps the file's name); returns dest, or \"\" when the file is absent.",
		getFile, true, req("path"), req("dest"), opt("saltenv", nil), opt("makedirs", false), opt("template", nil), opt("gzip", nil))
	reg("get_dir", "Copy a salt:// directory recursively under dest; returns the written paths.",
		getDir, true, req("path"), req("dest"), opt("saltenv", nil), opt("template", nil), opt("gzip", nil))
	reg("get_url", "Fetch a salt://, file:// or http(s) URL to dest; dest \"\" caches it, dest None returns the contents.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			ret, err := newClient(c.Env).getURL(ctx, c.Str("path"), c.Arg("dest"), c.Bool("makedirs"), saltenv(c))
			if err == nil && !modules.Truthy(ret) {
				c.Env.Log.Error("Unable to fetch file " + c.Str("path") + " from saltenv " + saltenv(c) + ".")
			}
			return ret, err
		}, false, req("path"), opt("dest", ""), opt("saltenv", nil), opt("makedirs", false), opt("source_hash", nil))
	reg("get_template", "Render a file with the template engine (jinja) and write it to dest; returns dest, or \"\" when the source is absent.",
		getTemplate, true, req("path"), req("dest"), opt("template", "jinja"), opt("saltenv", nil), opt("makedirs", false))
	reg("get_file_str", "Return the contents of a file from a URL (cached first), or False.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			p, err := newClient(c.Env).getURL(ctx, c.Str("path"), "", true, saltenv(c))
			s, ok := p.(string)
			if err != nil || !ok || s == "" {
				return false, err
			}
			b, err := os.ReadFile(s)
			if err != nil {
				return false, nil
			}
			return string(b), nil
		}, false, req("path"), opt("saltenv", nil))
	reg("cache_file", "Cache a file from a URL in the minion cache and return the cached path, or False.", cacheFile, false,
		req("path"), opt("saltenv", nil), opt("source_hash", nil), opt("verify_ssl", true), opt("use_etag", false))
	reg("cache_files", "Cache several files (a list or comma-separated string); returns the cached paths.", cacheFiles, false,
		req("paths"), opt("saltenv", nil))
	reg("cache_dir", "Cache every file under a salt:// directory, filtered by include_pat and exclude_pat (globs, or E@regex).",
		cacheDir, false, req("path"), opt("saltenv", nil), opt("include_empty", false), opt("include_pat", nil), opt("exclude_pat", nil))
	reg("cache_master", "Cache every file of the saltenv.", func(ctx context.Context, c *modules.Call) (any, error) {
		cl, env := newClient(c.Env), saltenv(c)
		out := []any{}
		for _, f := range cl.fileList(env, "") {
			r, err := cl.getFile(ctx, "salt://"+f, "", true, env)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}, false, opt("saltenv", nil))
	reg("cache_local_file", "Copy a local file into the minion's localfiles cache; returns the cached path, or \"\".", cacheLocalFile, false, req("path"))
	reg("cache_dest", "Return the path cp.cache_file would cache url to.", func(_ context.Context, c *modules.Call) (any, error) {
		return newClient(c.Env).cacheDest(c.Str("url"), saltenv(c)), nil
	}, false, req("url"), opt("saltenv", nil))
	reg("is_cached", "Return the cached path of a file, or \"\".", isCached, false, req("path"), opt("saltenv", nil))
	reg("hash_file", "Return {hsum, hash_type} of a salt:// or local file, or {} when absent.", func(ctx context.Context, c *modules.Call) (any, error) {
		return newClient(c.Env).hashFile(ctx, c.Str("path"), saltenv(c))
	}, false, req("path"), opt("saltenv", nil))
	reg("envs", "List the file server's saltenvs.", func(_ context.Context, c *modules.Call) (any, error) {
		return strs(newClient(c.Env).lister().Envs()), nil
	}, false)
	reg("list_states", "List the SLS names of the saltenv.", func(_ context.Context, c *modules.Call) (any, error) {
		return strs(listStates(newClient(c.Env).fileList(saltenv(c), ""))), nil
	}, false, opt("saltenv", nil))
	reg("list_master", "List the files of the saltenv, optionally under prefix.", func(_ context.Context, c *modules.Call) (any, error) {
		return strs(newClient(c.Env).fileList(saltenv(c), c.Str("prefix"))), nil
	}, false, opt("saltenv", nil), opt("prefix", ""))
	reg("list_master_dirs", "List the directories of the saltenv, optionally under prefix.", func(_ context.Context, c *modules.Call) (any, error) {
		return strs(newClient(c.Env).dirList(saltenv(c), c.Str("prefix"))), nil
	}, false, opt("saltenv", nil), opt("prefix", ""))
	reg("list_master_symlinks", "List the symlinks of the saltenv; always {} (links are followed).", func(context.Context, *modules.Call) (any, error) {
		return emptyMap(), nil
	}, false, opt("saltenv", nil), opt("prefix", ""))
	reg("list_minion", "List the files in the minion's cache for the saltenv and in its localfiles cache.", listMinion, false, opt("saltenv", nil))
}

func getFile(ctx context.Context, c *modules.Call) (any, error) {
	p, dest, err := renderFilenames(ctx, c, c.Str("path"), c.Str("dest"), saltenv(c))
	if err != nil {
		return nil, err
	}
	cl := newClient(c.Env)
	if h, err := cl.hashFile(ctx, p, saltenv(c)); err != nil || !modules.Truthy(h) {
		return "", err
	}
	return cl.getFile(ctx, p, dest, c.Bool("makedirs"), saltenv(c))
}

func getDir(ctx context.Context, c *modules.Call) (any, error) {
	cl, env := newClient(c.Env), saltenv(c)
	rp, dest, err := renderFilenames(ctx, c, c.Str("path"), c.Str("dest"), env)
	if err != nil {
		return nil, err
	}
	p, senv := splitEnv(rp)
	if senv != "" {
		env = senv
	}
	if !strings.HasPrefix(p, "salt://") {
		return nil, modules.Errorf("Unsupported path: %s", p)
	}
	rel := strings.TrimRight(strings.TrimPrefix(p, "salt://"), "/")
	prefix := ""
	if i := strings.LastIndex(rel, "/"); i >= 0 {
		prefix = rel[:i]
	}
	out := []string{}
	for _, f := range cl.fileList(env, rel) {
		if len(f) <= len(rel) || f[len(rel)] != '/' {
			continue
		}
		r, err := cl.getFile(ctx, "salt://"+f, dest+"/"+strings.TrimLeft(f[len(prefix):], "/"), true, env)
		if err != nil {
			return nil, err
		}
		if s, ok := r.(string); ok {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return strs(out), nil
}

func getTemplate(ctx context.Context, c *modules.Call) (any, error) {
	env := saltenv(c)
	src, missing, err := file.FetchSource(ctx, c.Env, c.Str("path"), env)
	if err != nil {
		return nil, err
	}
	if missing != "" || src == nil {
		return "", nil
	}
	dest := c.Str("dest")
	if isDirDest(dest) {
		dest = filepath.Join(dest, filepath.Base(c.Str("path")))
	}
	out, err := file.RenderTemplate(ctx, c.Env, c.Str("template"), string(src),
		file.TemplateVars{Name: dest, Source: c.Str("path"), Saltenv: env, Context: c.Kwargs})
	if err != nil {
		return nil, modules.Errorf("%w", err)
	}
	wrote, err := writeFile(dest, []byte(out), c.Bool("makedirs"))
	if err != nil || !wrote {
		return "", err
	}
	return dest, nil
}

func cacheFile(ctx context.Context, c *modules.Call) (any, error) {
	ret, err := newClient(c.Env).getURL(ctx, c.Str("path"), "", true, saltenv(c))
	if err != nil {
		return nil, err
	}
	if !modules.Truthy(ret) {
		c.Env.Log.Error("Unable to cache file '" + c.Str("path") + "' from saltenv '" + saltenv(c) + "'.")
		return false, nil
	}
	return ret, nil
}

func cacheFiles(ctx context.Context, c *modules.Call) (any, error) {
	var paths []string
	switch p := c.Arg("paths").(type) {
	case string:
		paths = strings.Split(p, ",")
	case []any:
		for _, x := range p {
			paths = append(paths, ordered.KeyString(x))
		}
	}
	cl := newClient(c.Env)
	out := []any{}
	for _, p := range paths {
		r, err := cl.getURL(ctx, p, "", true, saltenv(c))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// includeExclude is salt.utils.stringutils.check_include_exclude: globs,
// or regular expressions after "E@".
func includeExclude(p string, include, exclude any) bool {
	match := func(pat any) bool {
		s := ordered.KeyString(pat)
		if re, ok := strings.CutPrefix(s, "E@"); ok {
			r, err := regexp.Compile(re)
			return err == nil && r.MatchString(p)
		}
		return grains.Fnmatch(s, p)
	}
	switch {
	case include == nil && exclude == nil:
		return true
	case include != nil && exclude == nil:
		return match(include)
	case include == nil:
		return !match(exclude)
	}
	return match(include) && !match(exclude)
}

func cacheDir(ctx context.Context, c *modules.Call) (any, error) {
	cl, env := newClient(c.Env), saltenv(c)
	p, senv := splitEnv(c.Str("path"))
	if senv != "" {
		env = senv
	}
	if !strings.HasPrefix(p, "salt://") {
		return nil, modules.Errorf("Unsupported path: %s", p)
	}
	rel := strings.TrimPrefix(p, "salt://")
	if !strings.HasSuffix(rel, "/") {
		rel += "/"
	}
	out := []any{}
	for _, f := range cl.fileList(env, rel) {
		if !includeExclude(f, c.Arg("include_pat"), c.Arg("exclude_pat")) {
			continue
		}
		r, err := cl.getFile(ctx, "salt://"+f, "", true, env)
		if err != nil {
			return nil, err
		}
		if modules.Truthy(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func cacheLocalFile(_ context.Context, c *modules.Call) (any, error) {
	p := c.Str("path")
	data, err := os.ReadFile(p)
	if err != nil {
		return "", nil
	}
	dest := filepath.Join(newClient(c.Env).cachedir, "localfiles", strings.TrimLeft(p, "/"))
	if _, err := writeFile(dest, data, true); err != nil {
		return nil, err
	}
	return dest, nil
}

func (c *client) cacheDest(raw, saltenv string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	if strings.HasPrefix(raw, "salt://") {
		p, senv := splitEnv(raw)
		if senv != "" {
			saltenv = senv
		}
		return c.cacheLoc(strings.TrimPrefix(p, "salt://"), saltenv)
	}
	u, err := parseURL(raw)
	if err != nil {
		return ""
	}
	return c.extrnPath(u, saltenv)
}

func isCached(_ context.Context, c *modules.Call) (any, error) {
	cl, env := newClient(c.Env), saltenv(c)
	p := c.Str("path")
	if strings.HasPrefix(p, "salt://") {
		var senv string
		p, senv = splitEnv(p)
		if senv != "" {
			env = senv
		}
		p = strings.TrimPrefix(p, "salt://")
	}
	candidates := []string{
		cl.cacheLoc(p, env),
		filepath.Join(cl.cachedir, "localfiles", strings.TrimLeft(p, "|/")),
	}
	if u, err := parseURL(c.Str("path")); err == nil && u.Scheme != "" && u.Scheme != "salt" {
		candidates = append(candidates, cl.extrnPath(u, env))
	}
	for _, cand := range candidates {
		if _, err := os.Stat(cand); err == nil {
			return cand, nil
		}
	}
	return "", nil
}

func listMinion(_ context.Context, c *modules.Call) (any, error) {
	cl := newClient(c.Env)
	set := map[string]bool{}
	for _, root := range []string{filepath.Join(cl.cachedir, "files", saltenv(c)), filepath.Join(cl.cachedir, "localfiles")} {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				set[p] = true
			}
			return nil
		})
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return strs(out), nil
}

// listStates is fileclient.list_states over a file list.
func listStates(files []string) []string {
	set := map[string]bool{}
	for _, p := range files {
		switch {
		case strings.HasSuffix(p, "/init.sls"):
			set[strings.ReplaceAll(p, "/", ".")[:len(p)-9]] = true
		case strings.HasSuffix(p, ".sls"):
			set[strings.ReplaceAll(p, "/", ".")[:len(p)-4]] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
