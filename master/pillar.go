package master

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/jinja"
	"github.com/brinesalt/brine/state/pillar"
	"github.com/brinesalt/brine/state/render"
	"github.com/brinesalt/brine/state/target"
)

// minionData is a minion's entry in the minion data cache.
type minionData struct {
	Grains *ordered.Map
	Pillar *ordered.Map
}

// onPillar is AESFuncs._pillar: compile the minion's pillar from
// pillar_roots with the grains it sent, and cache both under
// cachedir/minions/<id>/data.p (salt.cache localfs, bank minions/<id>).
func (m *Master) onPillar(ctx context.Context, id string, load *ordered.Map) *ordered.Map {
	grains, _ := load.Value("grains").(*ordered.Map)
	if grains == nil {
		grains = ordered.New()
	}
	override, _ := load.Value("pillar_override").(*ordered.Map)
	env, _ := load.Value("pillarenv").(string)
	p, err := m.compilePillar(ctx, id, grains, override, env)
	if err != nil {
		m.log.Warn("pillar compile failed", "id", id, logattr.Err, err)
		p = ordered.FromPairs("_errors", []any{err.Error()})
	}
	m.storeData(id, minionData{Grains: grains, Pillar: p})
	return p
}

func (m *Master) compilePillar(ctx context.Context, id string, grains, override *ordered.Map, env string) (*ordered.Map, error) {
	files := fileclient.New(m.o.PillarRoots, nil)
	opts := m.o.Raw
	r := &render.Renderer{Log: m.log}
	if d, ok := opts.Value("renderer").(string); ok {
		r.Default = d
	}
	minion := &target.Minion{ID: id, Grains: grains}
	popts := opts.Copy() // merge strategy, ext_pillar, with the resolved cachedir
	popts.Set("cachedir", m.o.CacheDir)
	c := &pillar.Compiler{Files: files, Override: override, Saltenv: env, Log: m.log, Opts: popts, MinionID: id}
	c.Render = func(ctx context.Context, src []byte, rel, saltenv, sls string) (any, error) {
		rr := *r
		rr.Jinja = func(ctx context.Context, src, name string, vars map[string]any) (string, error) {
			loader := func(n string) ([]byte, string, error) {
				b, ok, err := files.ReadFile(ctx, n, saltenv)
				if err != nil {
					return nil, "", err
				}
				if !ok {
					return nil, "", fmt.Errorf("%s: %w", n, jinja.ErrTemplateNotFound)
				}
				return b, n, nil
			}
			return jinja.Render(ctx, src, jinja.Options{Name: name, Vars: vars, Loader: loader})
		}
		if sls == "top" && rel == "top.sls" {
			sls = ""
		}
		p := override
		if p == nil {
			p = ordered.New()
		}
		return rr.Render(ctx, src, render.Context{Saltenv: saltenv, SLS: sls, Rel: rel,
			Path: files.LocalPath("salt://"+rel, saltenv),
			Vars: map[string]any{"grains": grains, "pillar": p, "opts": opts}})
	}
	c.Match = func(tgt any, kind string) (bool, error) {
		k, err := target.ParseKind(kind)
		if err != nil {
			return false, nil
		}
		ok, err := target.Match(tgt, k, minion, target.Options{Nodegroups: m.o.Nodegroups})
		if err != nil {
			return false, nil
		}
		return ok, nil
	}
	var _ compile.Source = files
	return c.Compile(ctx)
}

func (m *Master) dataPath(id string) string {
	return filepath.Join(m.o.CacheDir, "minions", id, "data.p")
}

func (m *Master) storeData(id string, d minionData) {
	if !pki.ValidID(m.o.PKIDir, id) {
		return
	}
	m.data.put(id, d)
	b, err := protocol.Marshal(ordered.FromPairs("grains", d.Grains, "pillar", d.Pillar))
	if err != nil {
		return
	}
	path := m.dataPath(id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
		if err := crypt.WriteFileReplace(path, b, 0o600); err != nil {
			m.log.Warn("minion data cache", "id", id, logattr.Err, err)
		}
	}
}

// minionData returns the cached grains and pillar of a minion, reading
// the cache file when this process has not seen the minion yet.
func (m *Master) minionData(id string) (minionData, bool) {
	d, ok := m.data.get(id)
	if ok {
		return d, true
	}
	b, err := os.ReadFile(m.dataPath(id))
	if err != nil {
		return minionData{}, false
	}
	v, err := protocol.Unmarshal(b)
	if err != nil {
		return minionData{}, false
	}
	mm, _ := v.(*ordered.Map)
	d.Grains, _ = mm.Value("grains").(*ordered.Map)
	d.Pillar, _ = mm.Value("pillar").(*ordered.Map)
	m.data.put(id, d)
	return d, true
}
