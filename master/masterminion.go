package master

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules"
)

// MinionOpts are the master minion's options (salt/minion.py
// MasterMinion, which orchestration and the reactor run functions
// with): the master's config with id, file_roots and pillar_roots (when
// the config has none, the master's defaults), cachedir, file_client
// local and __role master.
func MinionOpts(raw *ordered.Map, id string, fileRoots, pillarRoots map[string][]string, cachedir string) *ordered.Map {
	opts := raw.Copy()
	opts.Set("id", id)
	for key, roots := range map[string]map[string][]string{"file_roots": fileRoots, "pillar_roots": pillarRoots} {
		if opts.Has(key) {
			continue
		}
		envs := make([]string, 0, len(roots))
		for e := range roots {
			envs = append(envs, e)
		}
		slices.Sort(envs)
		m := ordered.New()
		for _, e := range envs {
			dirs := make([]any, len(roots[e]))
			for i, d := range roots[e] {
				dirs[i] = d
			}
			m.Set(e, dirs)
		}
		opts.Set(key, m)
	}
	opts.Set("cachedir", cachedir)
	opts.Set("file_client", "local")
	opts.Set("__role", "master")
	return opts
}

// MinionGrains gathers the master minion's grains once, on first use
// (MasterMinion loads salt.loader.grains): the host's grains with the
// master minion's id.
type MinionGrains struct {
	once   sync.Once
	grains *ordered.Map
}

// Get returns the grains, gathering them with opts the first time; a
// failed gather is logged and gives {} with the id.
func (g *MinionGrains) Get(ctx context.Context, opts *ordered.Map, log *slog.Logger) *ordered.Map {
	g.once.Do(func() {
		gr, err := coregrains.Gather(ctx, coregrains.GatherOptions{Opts: opts})
		if err != nil || gr == nil {
			log.Warn("Unable to gather the master minion's grains", logattr.Err, err)
			gr = ordered.New()
		}
		gr.Set("id", opts.Value("id"))
		g.grains = gr
	})
	return g.grains
}

// minionEnv is the master minion's execution environment for the
// reactor's templates: every linked execution module, the master
// minion's options and grains, an empty pillar.
func (m *Master) minionEnv(ctx context.Context) *modules.Env {
	opts := MinionOpts(m.o.Raw, m.ID(), m.o.FileRoots, m.o.PillarRoots, m.o.CacheDir)
	env := &modules.Env{Opts: opts, Registry: modules.Default, Pillar: ordered.New(), Log: m.log, Context: map[string]any{}}
	env.SetGrainsFunc(func() *ordered.Map { return m.minionGrains.Get(ctx, opts, m.log).Copy() })
	return env
}
