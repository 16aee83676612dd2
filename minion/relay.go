package minion

import (
	"context"

	"github.com/brinesalt/brine/internal/ordered"
)

// RunRelay is Run for a relay (Options.Relay, the syndic): it signs in,
// calls started once signed in (the syndic fires its start event), then
// keeps the subscription up, handing every publication to Relay. It
// gathers no grains, asks for no pillar and sends no returns of its own:
// a syndic is no minion of its upper master (salt/minion.py
// SyndicManager._connect_syndic: connect_master, tune_in_no_block,
// fire_master_syndic_start).
func (m *Minion) RunRelay(ctx context.Context, started func(ctx context.Context)) error {
	defer m.req.Close()
	if _, err := m.authenticate(ctx, 0); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if started != nil {
		started(ctx)
	}
	err := m.subscribe(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Send sends load to the master on the request channel (the encrypted
// AsyncReqChannel.send; cmd is the caller's) and returns the decrypted
// answer. A refused session signs in again once; ctx bounds the whole.
func (m *Minion) Send(ctx context.Context, load *ordered.Map) (any, error) {
	return m.request(ctx, load, false)
}

// MasterAddress is the request address of the master in use.
func (m *Minion) MasterAddress() string { return m.req.Address() }

// PinnedMasterKey is the master's public key as pinned at sign-in, ""
// before the first.
func (m *Minion) PinnedMasterKey() string {
	pub, _ := m.cachedMaster()
	return pub
}
