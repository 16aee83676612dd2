package pkgstate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg"
	"github.com/brinesalt/brine/state/states"
)

// want is one desired package: its version condition, "" for any, or
// the source of a sources entry.
type want struct {
	name, version string
}

// plan is what _find_install_targets found to do.
type plan struct {
	desired     []want
	targets     []want
	toReinstall []want
	versionSpec bool
}

func (p *plan) desiredVersion(name string) string {
	for _, d := range p.desired {
		if d.name == name {
			return d.version
		}
	}
	return ""
}

// Installed is pkg.installed.
func Installed(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Arg("name")
	pkgs, sources := c.Arg("pkgs"), c.Arg("sources")
	if l, ok := pkgs.([]any); ok && len(l) == 0 {
		return states.NewResult(name, states.True, "No packages to install provided"), nil
	}
	if modules.Truthy(name) && !modules.Truthy(pkgs) && !modules.Truthy(sources) {
		if v := c.Arg("version"); v != nil {
			pkgs = []any{ordered.FromPairs(c.Str("name"), ordered.KeyString(v))}
		} else {
			pkgs = []any{c.Str("name")}
		}
	}
	if modules.Truthy(c.Arg("pkg_verify")) {
		return states.NewResult(name, states.False, "pkg.verify not implemented"), nil
	}
	refresh := checkRefresh(c, c.Arg("refresh"))
	p, res := findInstallTargets(ctx, c, pkgs, sources, &refresh)
	if res != nil {
		return holdEarly(ctx, c, res, pkgs, sources), nil
	}
	if c.Env.Test {
		return predictInstall(c, p, modules.Truthy(sources)), nil
	}
	changes := ordered.New()
	if len(p.targets) > 0 || len(p.toReinstall) > 0 {
		ret, err := callInstall(ctx, c, p, pkgs, sources, refresh)
		var inv *modules.InvocationError
		if errors.As(err, &inv) {
			// Salt catches only CommandExecutionError here; anything else
			// is an exception in the state.
			return nil, err
		}
		if err != nil {
			comment, ch := errComment(err, "An error was encountered while installing package(s): ")
			r := states.NewResult(name, states.False, comment)
			r.Changes = ch
			return r, nil
		}
		if m, ok := ret.(*ordered.Map); ok {
			changes = m
		}
	}
	notes, holdErr := holdAfter(ctx, c, p, changes)
	if holdErr != "" {
		return &states.Result{Name: name, Result: states.False, Comment: holdErr, Changes: changes}, nil
	}
	return verifyInstall(ctx, c, p, changes, modules.Truthy(sources), notes)
}

func isTrue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int:
		return x > 0
	case string:
		return strings.EqualFold(strings.TrimSpace(x), "true")
	}
	return false
}

// findInstallTargets is _find_install_targets; a non-nil Result ends the
// state early (nothing to do, or a problem).
func findInstallTargets(ctx context.Context, c *states.Call, pkgs, sources any, refresh *bool) (*plan, *states.Result) {
	name := c.Arg("name")
	if modules.Truthy(pkgs) && modules.Truthy(sources) {
		return nil, states.NewResult(name, states.False, `Only one of "pkgs" and "sources" is permitted.`)
	}
	cur, err := listPkgs(ctx, c)
	if err != nil {
		return nil, states.NewResult(name, states.False, err.Error())
	}
	p := &plan{}
	if modules.Truthy(pkgs) {
		ts, ok := pkg.Repack(pkgs, nil)
		if !ok {
			return nil, states.NewResult(name, states.False, "Invalidly formatted 'pkgs' parameter. See minion log.")
		}
		for _, t := range ts {
			p.desired = append(p.desired, want{t.Name, t.Version})
		}
	} else if l, ok := sources.([]any); ok {
		for _, s := range l {
			if m, ok := s.(*ordered.Map); ok && m.Len() == 1 {
				k := m.Keys()[0]
				p.desired = append(p.desired, want{ordered.KeyString(k), ordered.KeyString(m.Value(k))})
			}
		}
		if len(p.desired) == 0 {
			return nil, states.NewResult(name, states.False, "Invalidly formatted 'sources' parameter. See minion log.")
		}
	}
	isSources := modules.Truthy(sources)
	if !isSources {
		if res := resolveLatest(ctx, c, p, cur, refresh); res != nil {
			return nil, res
		}
	}
	cmp := cmpFunc(ctx, c)
	reinstall := c.Bool("reinstall")
	for _, d := range p.desired {
		cver := cur[d.name]
		switch {
		case len(cver) == 0:
			p.targets = append(p.targets, d)
		case reinstall:
			p.toReinstall = append(p.toReinstall, d)
		case isSources, d.version == "":
		default:
			p.versionSpec = true
			if !fulfills(cmp, cver, d.version, c.Arg("ignore_epoch"), c.Bool("allow_updates")) {
				p.targets = append(p.targets, d)
			}
		}
	}
	if len(p.targets) == 0 && len(p.toReinstall) == 0 {
		msg := "All specified packages are already installed"
		if p.versionSpec && !isSources {
			msg += " and are at the desired version"
		}
		return nil, states.NewResult(name, states.True, msg)
	}
	return p, nil
}

// resolveLatest replaces the version "latest" by the candidate version,
// or the installed one when nothing newer exists.
func resolveLatest(ctx context.Context, c *states.Call, p *plan, cur map[string][]string, refresh *bool) *states.Result {
	var names []any
	for _, d := range p.desired {
		if d.version == "latest" {
			names = append(names, d.name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	v, err := salt(ctx, c, "pkg.latest_version", names, "refresh", *refresh)
	if err != nil {
		return states.NewResult(c.Arg("name"), states.False, err.Error())
	}
	*refresh = false
	resolved := map[string]string{}
	if m, ok := v.(*ordered.Map); ok {
		m.Range(func(k, val any) bool { resolved[ordered.KeyString(k)] = ordered.KeyString(val); return true })
	} else {
		resolved[ordered.KeyString(names[0])] = ordered.KeyString(v)
	}
	for i, d := range p.desired {
		if d.version != "latest" {
			continue
		}
		r := resolved[d.name]
		if r == "" && len(cur[d.name]) > 0 {
			r = cur[d.name][len(cur[d.name])-1]
		}
		p.desired[i].version = r
	}
	return nil
}

// predictInstall is the test=True return of pkg.installed.
func predictInstall(c *states.Call, p *plan, isSources bool) *states.Result {
	var comment []string
	changes := ordered.New()
	if len(p.targets) > 0 {
		names := make([]string, len(p.targets))
		for i, t := range p.targets {
			names[i] = t.name
			changes.Set(t.name, ordered.FromPairs("new", "installed", "old", ""))
		}
		comment = append(comment, "The following packages would be installed/updated: "+strings.Join(names, ", "))
	}
	if len(p.toReinstall) > 0 {
		var rt []string
		for _, t := range p.toReinstall {
			s := t.name
			if !isSources {
				s = desiredStr(t.name, t.version)
			}
			rt = append(rt, s)
			changes.Set(s, ordered.FromPairs("new", "installed", "old", ""))
		}
		comment = append(comment, "The following packages would be reinstalled: "+strings.Join(rt, ", "))
	}
	r := states.NewResult(c.Arg("name"), states.None, strings.Join(comment, "\n"))
	r.Changes = changes
	return r
}

// callInstall runs pkg.install with the targets as pkgs (or the
// matching sources) as the state does.
func callInstall(ctx context.Context, c *states.Call, p *plan, pkgs, sources any, refresh bool) (any, error) {
	var newPkgs, newSources any
	if modules.Truthy(pkgs) {
		var l []any
		for _, t := range append(append([]want(nil), p.targets...), p.toReinstall...) {
			var v any
			if t.version != "" {
				v = t.version
			}
			l = append(l, ordered.FromPairs(t.name, v))
		}
		newPkgs = l
	} else if src, ok := sources.([]any); ok {
		keep := map[string]bool{}
		for _, t := range append(append([]want(nil), p.targets...), p.toReinstall...) {
			keep[t.name] = true
		}
		var l []any
		for _, s := range src {
			if m, ok := s.(*ordered.Map); ok && m.Len() == 1 && keep[ordered.KeyString(m.Keys()[0])] {
				l = append(l, s)
			}
		}
		newSources = l
	}
	kw := []any{"name", nil, "refresh", refresh, "version", nil, "fromrepo", c.Arg("fromrepo"),
		"skip_verify", c.Arg("skip_verify"), "pkgs", newPkgs, "sources", newSources, "reinstall", len(p.toReinstall) > 0,
		"normalize", c.Arg("normalize"), "ignore_epoch", c.Arg("ignore_epoch"), "saltenv", c.Saltenv}
	c.Kwargs.Range(func(k, v any) bool {
		kw = append(kw, k, v)
		return true
	})
	return salt(ctx, c, "pkg.install", nil, kw...)
}

// outcome sorts the desired packages after an install.
type outcome struct {
	modified, notModified, failed []string
}

// verifyInstall is the end of pkg.installed: compare what is installed
// now with what was asked for and word the comment.
func verifyInstall(ctx context.Context, c *states.Call, p *plan, changes *ordered.Map, isSources bool, notes holdNotes) (*states.Result, error) {
	o, err := classify(ctx, c, p, changes, isSources)
	if err != nil {
		return nil, err
	}
	show := func(names []string) string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = n
			if !isSources {
				out[i] = desiredStr(n, p.desiredVersion(n))
			}
		}
		return strings.Join(out, ", ")
	}
	var comment []string
	if n := len(o.modified); n > 0 {
		if s := show(o.modified); len(s) < 20 {
			comment = append(comment, "The following packages were installed/updated: "+s)
		} else {
			comment = append(comment, fmt.Sprintf("%d targeted package%s %s installed/updated.", n, plural(n, "s", ""), plural(n, "were", "was")))
		}
	}
	comment = append(comment, notes.modified...)
	if n := len(o.notModified); n > 20 {
		comment = append(comment, fmt.Sprintf("%d targeted package%s %s already installed", n, plural(n, "s", ""), plural(n, "were", "was")))
	} else if n > 0 {
		comment = append(comment, "The following packages were already installed: "+show(o.notModified))
	}
	comment = append(comment, notes.same...)
	result := states.True
	if len(o.failed) > 0 {
		comment = append([]string{"The following packages failed to install/update: " + show(o.failed)}, comment...)
		result = states.False
	}
	if len(notes.failed) > 0 {
		comment = append(comment, notes.failed...)
		result = states.False
	}
	for _, t := range p.toReinstall {
		s := t.name
		if !isSources {
			s = desiredStr(t.name, p.desiredVersion(t.name))
		}
		if changes.Has(t.name) {
			comment = append(comment, "Package "+s+" was reinstalled.")
		} else {
			comment = append(comment, "Reinstall was not successful for package "+s+".")
			result = states.False
		}
	}
	r := states.NewResult(c.Arg("name"), result, strings.Join(comment, "\n"))
	r.Changes = changes
	return r, nil
}

// classify is _verify_install and the lists built from it; for sources
// the changes decide.
func classify(ctx context.Context, c *states.Call, p *plan, changes *ordered.Map, isSources bool) (outcome, error) {
	var o outcome
	inTargets := func(n string) bool { return containsWant(p.targets, n) }
	if isSources {
		for _, t := range p.targets {
			if changes.Has(t.name) {
				o.modified = append(o.modified, t.name)
			} else {
				o.failed = append(o.failed, t.name)
			}
		}
		for _, d := range p.desired {
			if !inTargets(d.name) && !containsWant(p.toReinstall, d.name) {
				o.notModified = append(o.notModified, d.name)
			}
		}
		return o, nil
	}
	now, err := listPkgs(ctx, c)
	if err != nil {
		return o, err
	}
	cmp := cmpFunc(ctx, c)
	for _, d := range p.desired {
		ok := installedOK(cmp, now[strings.SplitN(d.name, "=", 2)[0]], d.version, c.Arg("ignore_epoch"))
		switch {
		case ok && inTargets(d.name):
			o.modified = append(o.modified, d.name)
		case ok && !containsWant(p.toReinstall, d.name):
			o.notModified = append(o.notModified, d.name)
		case !ok && inTargets(d.name):
			o.failed = append(o.failed, d.name)
		}
	}
	return o, nil
}

func plural(n int, many, one string) string {
	if n > 1 {
		return many
	}
	return one
}

func containsWant(l []want, name string) bool {
	for _, w := range l {
		if w.name == name {
			return true
		}
	}
	return false
}

// installedOK is one package of _verify_install.
func installedOK(cmp func(a, b string) int, cver []string, ver string, ignoreEpoch any) bool {
	switch {
	case len(cver) == 0:
		return false
	case ver == "latest", ver == "":
		return true
	case strings.HasSuffix(ver, "*") && strings.HasPrefix(cver[0], ver[:len(ver)-1]):
		return true
	}
	return fulfills(cmp, cver, ver, ignoreEpoch, false)
}
