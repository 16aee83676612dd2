package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/state/apply"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/target"
)

// needsData reports whether a target type matches on what hosts are
// (grains, pillar, addresses) rather than on their ids. Salt's salt-ssh
// supports these only through the cache roster of an existing master;
// Brine answers them from its own controller-side grains cache.
func needsData(kind string) bool {
	switch target.Kind(kind) {
	case target.Grain, target.GrainPCRE, target.Pillar, target.PillarPCRE, target.PillarExact,
		target.IPCIDR, target.Compound:
		return true
	}
	return false
}

// rosterQuery is what the roster is asked for: the expression itself for
// id-based targeting, every host for data-based targeting.
func (a *app) rosterQuery() (tgt, kind string) {
	if needsData(a.o.tgtType) {
		return "*", "glob"
	}
	return a.o.target, a.o.tgtType
}

// selectByData narrows the roster's hosts to those whose cached grains
// match the expression. Hosts with no fresh cache entry (or all, with
// --refresh) are asked for their grains first, in one light round trip;
// a host that cannot be reached is left out with a warning, as it cannot
// be known to match.
func (a *app) selectByData(ctx context.Context) error {
	opts := target.OptionsFromConfig(a.cfg.Raw)
	// A bad P@/J@ (or -P, --pillar-pcre) regex fails the run, as a bad -E
	// one does, instead of matching nothing with exit 0.
	opts.RejectBadRegex = true
	m, err := target.Compile(a.o.target, target.Kind(a.o.tgtType), opts)
	if err != nil {
		return fmt.Errorf("target %q: %w", a.o.target, err)
	}
	cache := a.grainsCache()
	var stale []roster.Target
	for _, t := range a.targets {
		if _, fresh := cache.Get(t.ID); !fresh || a.o.refresh {
			stale = append(stale, t)
		}
	}
	if len(stale) > 0 {
		for r := range a.exec.Run(ctx, stale, sshexec.Job{JID: a.job.JID, Fun: "test.ping", RefreshGrains: true}) {
			if r.Err != nil {
				a.log.Warn("cannot learn the grains of a host; leaving it out of the match", logattr.Host, r.ID, logattr.Err, r.Err)
			}
		}
	}
	var keep []roster.Target
	for _, t := range a.targets {
		g, _ := cache.Get(t.ID)
		if g == nil {
			continue
		}
		mn := &target.Minion{ID: t.ID, Grains: g}
		if a.needsPillar() {
			if mn.Pillar, err = a.hostPillar(ctx, t, g); err != nil {
				a.log.Warn("cannot compile the pillar of a host; leaving it out of the match", logattr.Host, t.ID, logattr.Err, err)
				continue
			}
		}
		if m.Match(mn) {
			keep = append(keep, t)
		}
	}
	a.targets = keep
	return nil
}

// needsPillar reports whether the expression can look at pillar: pillar
// targets, and compound expressions with I@ or J@ (or nodegroups, which
// may hold them).
func (a *app) needsPillar() bool {
	switch target.Kind(a.o.tgtType) {
	case target.Pillar, target.PillarPCRE, target.PillarExact:
		return true
	case target.Compound:
		return strings.Contains(a.o.target, "I@") || strings.Contains(a.o.target, "J@") ||
			strings.Contains(a.o.target, "N@")
	}
	return false
}

// hostPillar compiles one host's pillar on the controller, as for its
// state runs, from its cached grains.
func (a *app) hostPillar(ctx context.Context, t roster.Target, grains *ordered.Map) (*ordered.Map, error) {
	opts := a.stateWrapper().Opts.Copy()
	t.MinionOpts.Range(func(k, v any) bool { opts.Set(k, v); return true })
	opts.Set("id", t.ID)
	env := (&modules.Env{Opts: opts, Registry: modules.Default, Log: a.log, Context: map[string]any{}}).WithGrains(grains)
	return apply.CompilePillar(ctx, env, nil)
}

func (a *app) grainsCache() *sshexec.GrainsCache {
	return sshexec.NewGrainsCache(a.cfg.CacheDir, a.cfg.CacheLife)
}
