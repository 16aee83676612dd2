package minion

import (
	"context"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/beacons"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/modules/saltutil"
)

var _ beacons.Provider = (*Minion)(nil)

// Beacons is the minion's beacons, which the beacons execution module
// manages (nil before Run).
func (m *Minion) Beacons() *beacons.Manager {
	m.schedMu.Lock()
	defer m.schedMu.Unlock()
	return m.beacons
}

// newBeacons builds the beacons over the `beacons:` option and the
// pillar's, processed every loop_interval (Minion.setup_beacons).
func (m *Minion) newBeacons() *beacons.Manager {
	opt, _ := m.opts.Value("beacons").(*ordered.Map)
	b := beacons.New(beacons.Options{
		Beacons: opt, LoopInterval: m.loopInterval(), Log: m.log,
		Env:          &beacons.Env{ID: m.id, Call: m.callFunction},
		Fire:         m.fireBeacons,
		StateRunning: stateRunning,
	})
	m.schedMu.Lock()
	m.beacons = b
	m.schedMu.Unlock()
	m.beaconsPillar()
	return b
}

// loopInterval is the loop_interval option (1 s by default).
func (m *Minion) loopInterval() time.Duration {
	if n, ok := protocol.AsInt(m.opts.Value("loop_interval")); ok && n > 0 {
		return time.Duration(n) * time.Second
	}
	return time.Second
}

// beaconsPillar hands the pillar's beacons over after a refresh.
func (m *Minion) beaconsPillar() {
	b := m.Beacons()
	if b == nil {
		return
	}
	m.dataMu.RLock()
	v := m.pillar.Value("beacons")
	m.dataMu.RUnlock()
	if err := b.SetPillar(v); err != nil {
		m.log.Error("pillar beacons ignored", logattr.Err, err)
	}
}

// stateRunning is disable_during_state_run's check: a running job
// whose function matches "state.*".
func stateRunning() bool {
	for _, j := range saltutil.Jobs.List() {
		if strings.HasPrefix(j.Fun, "state") {
			return true
		}
	}
	return false
}

// callFunction runs an execution function for a beacon (its __salt__).
func (m *Minion) callFunction(ctx context.Context, fun string, args ...any) (any, error) {
	return m.call(ctx, fun, args, nil)
}

// fireBeacons sends one pass's events to the master as
// _fire_master(events=…) does: a _minion_event with the events list,
// each {tag, data, beacon_name}, which the master fires on its bus.
func (m *Minion) fireBeacons(ctx context.Context, events []any) {
	// Salt's minion fires the pass on its own bus as __beacons_return,
	// whose handler forwards it to the master; the minion's engines see
	// it there.
	m.FireLocal("__beacons_return", ordered.FromPairs("beacons", events))
	load := ordered.FromPairs("id", m.id, "cmd", protocol.CmdMinionEvent, "pretag", nil, "events", events)
	if _, err := m.request(ctx, load, false); err != nil && ctx.Err() == nil {
		m.log.Warn("beacon events not sent", "events", len(events), logattr.Err, err)
	}
}
