package pkg

import (
	"context"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// contextKey is where list_pkgs caches the package database for the rest
// of the job, as aptpkg and yumpkg use __context__["pkg.list_pkgs"]; a
// call that changes packages drops it.
const contextKey = "pkg.list_pkgs"

// lists returns the package database, from the job's cache when a
// previous call read it.
func (j *job) lists(ctx context.Context) (*lists, error) {
	env := j.env()
	if env != nil && env.Context != nil {
		if l, ok := env.Context[contextKey].(*lists); ok {
			return l, nil
		}
	}
	l, err := j.p.list(ctx, j)
	if err != nil {
		return nil, err
	}
	for _, m := range []map[string][]string{l.installed, l.removed, l.purge} {
		for name, vs := range m {
			sort.SliceStable(vs, func(a, b int) bool { return j.p.cmp(vs[a], vs[b]) < 0 })
			m[name] = vs
		}
	}
	if env != nil && env.Context != nil {
		env.Context[contextKey] = l
	}
	return l, nil
}

// RefreshedKey marks in the job's context that the package database was
// refreshed. Salt's pkg state writes a "refresh pending" tag (rtag) in
// mod_init before the first pkg.installed or pkg.latest of a run and
// refresh_db clears it, so refresh=None means "refresh once per run";
// the pkg state reads this key for the same effect.
const RefreshedKey = "pkg.refreshed"

// refresh refreshes the package database and records it.
func (j *job) refresh(ctx context.Context) (any, error) {
	ret, err := j.p.refresh(ctx, j)
	if err == nil {
		if env := j.env(); env != nil && env.Context != nil {
			env.Context[RefreshedKey] = true
		}
	}
	return ret, err
}

// forget drops the cached package database after a change.
func (j *job) forget() {
	if env := j.env(); env != nil && env.Context != nil {
		delete(env.Context, contextKey)
	}
}

// installed returns list_pkgs' default view: installed packages plus
// the ones marked for purge that are still installed.
func (l *lists) current() map[string][]string {
	out := make(map[string][]string, len(l.installed)+len(l.purge))
	for k, v := range l.purge {
		out[k] = v
	}
	for k, v := range l.installed {
		out[k] = v
	}
	return out
}

// addPkg is pkg_resource.add_pkg.
func addPkg(m map[string][]string, name, version string) {
	m[name] = append(m[name], version)
}

// pkgMap renders a package map in Salt's shape, sorted by name: versions
// joined by commas (pkg_resource.stringify) or as lists.
func pkgMap(m map[string][]string, asList bool) *ordered.Map {
	out := ordered.New()
	for _, name := range sortedKeys(m) {
		if asList {
			l := make([]any, len(m[name]))
			for i, v := range m[name] {
				l[i] = v
			}
			out.Set(name, l)
		} else {
			out.Set(name, strings.Join(m[name], ","))
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compareDicts is salt.utils.data.compare_dicts over stringified package
// maps: {name: {old, new}} for every name whose versions differ, "" for a
// side that lacks it.
func compareDicts(old, new map[string][]string) *ordered.Map {
	names := map[string]bool{}
	for k := range old {
		names[k] = true
	}
	for k := range new {
		names[k] = true
	}
	out := ordered.New()
	for _, k := range sortedKeys(names) {
		o, n := strings.Join(old[k], ","), strings.Join(new[k], ",")
		if o != n {
			out.Set(k, ordered.FromPairs("old", o, "new", n))
		}
	}
	return out
}
