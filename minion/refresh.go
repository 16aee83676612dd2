package minion

import (
	"context"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// The running minion keeps its grains and pillar in memory between jobs
// and for matching publications; these refresh them, as salt/minion.py
// does on the pillar_refresh, module_refresh and grains_refresh events
// of its event bus. Jobs reach them through modules.Env.Minion.

var _ modules.Refresher = (*Minion)(nil)

// RefreshPillar gathers the grains again and compiles the pillar on the
// master with them (Minion.pillar_refresh, whose module_refresh reloads
// the grains first). The _pillar request carries the grains, so the
// master's minion data cache, which -G and -I targeting read, has both.
func (m *Minion) RefreshPillar(ctx context.Context) error {
	m.refreshMu.Lock()
	defer m.refreshMu.Unlock()
	if err := m.loadGrains(ctx); err != nil {
		m.log.Warn("grains", logattr.Err, err)
	}
	return m.refreshPillar(ctx)
}

// RefreshGrains gathers the grains again (Minion.module_refresh).
func (m *Minion) RefreshGrains(ctx context.Context) error {
	m.refreshMu.Lock()
	defer m.refreshMu.Unlock()
	return m.loadGrains(ctx)
}

// refreshGrainsEvery is grains_refresh_every: Salt schedules a
// grains_refresh event that many minutes apart, and its handler
// refreshes the pillar (so the master learns the grains) when the
// grains changed.
func (m *Minion) refreshGrainsEvery(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.dataMu.RLock()
		before := m.grains
		m.dataMu.RUnlock()
		if err := m.RefreshGrains(ctx); err != nil {
			m.log.Warn("grains", logattr.Err, err)
		}
		m.dataMu.RLock()
		changed := !ordered.Equal(before, m.grains)
		m.dataMu.RUnlock()
		if !changed {
			continue
		}
		m.log.Info("grains changed, refreshing pillar")
		if err := m.RefreshPillar(ctx); err != nil && ctx.Err() == nil {
			m.log.Error("Pillar data could not be refreshed. One or more masters may be down!", logattr.Err, err)
		}
	}
}
