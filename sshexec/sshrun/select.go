package sshrun

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
func (sr *Run) rosterQuery() (tgt, kind string) {
	if needsData(sr.s.TgtType) {
		return "*", "glob"
	}
	return sr.s.Target, sr.s.TgtType
}

// selectByData narrows the roster's hosts to those whose cached grains
// match the expression. Hosts with no fresh cache entry (or all, with
// --refresh) are asked for their grains first, in one light round trip;
// a host that cannot be reached is left out with a warning, as it cannot
// be known to match.
func (sr *Run) selectByData(ctx context.Context) error {
	opts := target.OptionsFromConfig(sr.cfg.Raw)
	// A bad P@/J@ (or -P, --pillar-pcre) regex fails the run, as a bad -E
	// one does, instead of matching nothing with exit 0.
	opts.RejectBadRegex = true
	m, err := target.Compile(sr.s.Target, target.Kind(sr.s.TgtType), opts)
	if err != nil {
		return fmt.Errorf("target %q: %w", sr.s.Target, err)
	}
	cache := sr.grainsCache()
	var stale []roster.Target
	for _, t := range sr.targets {
		if _, fresh := cache.Get(t.ID); !fresh || sr.s.Refresh {
			stale = append(stale, t)
		}
	}
	if len(stale) > 0 {
		for r := range sr.exec.Run(ctx, stale, sshexec.Job{JID: sr.job.JID, Fun: "test.ping", RefreshGrains: true}) {
			if r.Err != nil {
				sr.log.Warn("cannot learn the grains of a host; leaving it out of the match", logattr.Host, r.ID, logattr.Err, r.Err)
			}
		}
	}
	var keep []roster.Target
	for _, t := range sr.targets {
		g, _ := cache.Get(t.ID)
		if g == nil {
			continue
		}
		mn := &target.Minion{ID: t.ID, Grains: g}
		if sr.needsPillar() {
			if mn.Pillar, err = sr.hostPillar(ctx, t, g); err != nil {
				sr.log.Warn("cannot compile the pillar of a host; leaving it out of the match", logattr.Host, t.ID, logattr.Err, err)
				continue
			}
		}
		if m.Match(mn) {
			keep = append(keep, t)
		}
	}
	sr.targets = keep
	return nil
}

// needsPillar reports whether the expression can look at pillar: pillar
// targets, and compound expressions with I@ or J@ (or nodegroups, which
// may hold them).
func (sr *Run) needsPillar() bool {
	switch target.Kind(sr.s.TgtType) {
	case target.Pillar, target.PillarPCRE, target.PillarExact:
		return true
	case target.Compound:
		return strings.Contains(sr.s.Target, "I@") || strings.Contains(sr.s.Target, "J@") ||
			strings.Contains(sr.s.Target, "N@")
	}
	return false
}

// hostPillar compiles one host's pillar on the controller, as for its
// state runs, from its cached grains.
func (sr *Run) hostPillar(ctx context.Context, t roster.Target, grains *ordered.Map) (*ordered.Map, error) {
	opts := sr.stateWrapper().Opts.Copy()
	t.MinionOpts.Range(func(k, v any) bool { opts.Set(k, v); return true })
	opts.Set("id", t.ID)
	env := (&modules.Env{Opts: opts, Registry: modules.Default, Log: sr.log, Context: map[string]any{}}).WithGrains(grains)
	return apply.CompilePillar(ctx, env, nil)
}

func (sr *Run) grainsCache() *sshexec.GrainsCache {
	return sshexec.NewGrainsCache(sr.cfg.CacheDir, sr.cfg.CacheLife)
}
