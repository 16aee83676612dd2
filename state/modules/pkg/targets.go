package pkg

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// target is one package asked for: a name with an optional version, or
// for sources a local package file.
type target struct {
	name       string
	version    string
	hasVersion bool
	// path is the package file of a sources target.
	path string
}

// Repack is states/pkg.py _repack_pkgs and pkg_resource's: a pkgs list
// of names and one-key {name: version} mappings, in order, versions as
// Python's str() prints them (None stays absent). ok is false for a
// malformed list.
func Repack(pkgs any, normalize func(string) string) (out []Target, ok bool) {
	l, isList := pkgs.([]any)
	if !isList {
		return nil, false
	}
	seen := map[string]int{}
	for _, item := range l {
		var t Target
		switch x := item.(type) {
		case string:
			t.Name = x
		case int, float64, bool:
			t.Name = ordered.KeyString(x)
		case *ordered.Map:
			if x.Len() != 1 {
				return nil, false
			}
			k := x.Keys()[0]
			t.Name = ordered.KeyString(k)
			if v := x.Value(k); v != nil {
				t.Version, t.HasVersion = ordered.KeyString(v), true
			}
		default:
			return nil, false
		}
		if normalize != nil {
			t.Name = normalize(t.Name)
		}
		if i, dup := seen[t.Name]; dup {
			out[i] = t
			continue
		}
		seen[t.Name] = len(out)
		out = append(out, t)
	}
	return out, len(out) > 0
}

// Target is a package name with the version asked for, if any.
type Target struct {
	Name       string
	Version    string
	HasVersion bool
}

// parseTargets is pkg_resource.parse_targets: pkgs, then sources, then
// name (split on commas, each with the version argument). kind is
// "repository" or "file"; no targets at all is not an error.
func parseTargets(ctx context.Context, j *job) (out []target, kind string, err error) {
	pkgs, sources := j.c.Arg("pkgs"), j.c.Arg("sources")
	if modules.Truthy(pkgs) && modules.Truthy(sources) {
		j.log().Error(`Only one of "pkgs" and "sources" can be used.`)
		return nil, "", nil
	}
	switch {
	case modules.Truthy(pkgs):
		ts, ok := Repack(pkgs, j.normalize)
		if !ok {
			return nil, "", modules.Invalidf("Invalidly formatted 'pkgs' parameter. See minion log.")
		}
		for _, t := range ts {
			out = append(out, target{name: t.Name, version: t.Version, hasVersion: t.HasVersion})
		}
		return out, "repository", nil
	case modules.Truthy(sources):
		return j.sourceTargets(ctx, sources)
	case modules.Truthy(j.c.Arg("name")):
		version, hasVersion := "", false
		if v, _ := j.kw("version"); v != nil {
			version, hasVersion = ordered.KeyString(v), true
		}
		for _, n := range strings.Split(j.c.Str("name"), ",") {
			out = append(out, target{name: j.normalize(n), version: version, hasVersion: hasVersion})
		}
		return out, "repository", nil
	}
	j.log().Error("No package sources provided")
	return nil, "", nil
}

// sourceTargets resolves sources: [{name: path-or-url}]. salt:// files
// are fetched into a temporary directory that lives for the job.
func (j *job) sourceTargets(ctx context.Context, sources any) ([]target, string, error) {
	l, ok := sources.([]any)
	if !ok {
		return nil, "", modules.Invalidf("Invalidly formatted 'sources' parameter. See minion log.")
	}
	var out []target
	for _, item := range l {
		m, ok := item.(*ordered.Map)
		if !ok || m.Len() != 1 {
			return nil, "", modules.Invalidf("Invalidly formatted 'sources' parameter. See minion log.")
		}
		k := m.Keys()[0]
		name, src := ordered.KeyString(k), ordered.KeyString(m.Value(k))
		path, err := j.cacheSource(ctx, name, src)
		if err != nil {
			return nil, "", err
		}
		out = append(out, target{name: name, path: path})
	}
	return out, "file", nil
}

func (j *job) cacheSource(ctx context.Context, name, src string) (string, error) {
	if !strings.HasPrefix(src, "salt://") {
		if !filepath.IsAbs(src) {
			return "", modules.Invalidf("Path %s for package %s is either not absolute or an invalid protocol", src, name)
		}
		return src, nil
	}
	env := j.env()
	if env == nil || env.Files == nil {
		return "", modules.Errorf("Unable to cache %s: no file client", src)
	}
	data, err := env.Files.Get(ctx, src, saltenv(j))
	if err != nil {
		return "", modules.Errorf("Unable to cache %s: %w", src, err)
	}
	dir, err := os.MkdirTemp("", "brine-pkg-")
	if err != nil {
		return "", modules.Errorf("cache %s: %w", src, err)
	}
	path := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", modules.Errorf("cache %s: %w", src, err)
	}
	return path, nil
}

func saltenv(j *job) string {
	if s := j.kwStr("saltenv"); s != "" {
		return s
	}
	return "base"
}

// normalize is the provider's normalize_name: apt drops ":arch" for the
// host's own architecture, yum drops ".arch" likewise.
func (j *job) normalize(name string) string {
	osarch := grainStr(j.env(), "osarch")
	sep := ":"
	if _, isYum := j.p.(*yum); isYum {
		sep = "."
	} else if _, isApt := j.p.(apt); !isApt {
		return name
	}
	i := strings.LastIndex(name, sep)
	if i < 0 {
		return name
	}
	switch arch := name[i+1:]; arch {
	case osarch, "all", "any", "noarch":
		return name[:i]
	}
	return name
}

// versionSpec splits a leading comparison operator off a version as
// salt.utils.pkg.split_comparison does.
func versionSpec(v string) (oper, ver string) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && strings.ContainsRune("<>=!", rune(v[i])) {
		i++
	}
	return v[:i], strings.TrimSpace(v[i:])
}
