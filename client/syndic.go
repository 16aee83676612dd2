package client

import (
	"context"

	"github.com/brinesalt/brine/master"
)

// syndicAsker is a publisher that can say which of the master's ids are
// syndics (master.Client.Syndics).
type syndicAsker interface {
	Syndics(ctx context.Context) (master.SyndicInfo, error)
}

// newTiers asks the master about its syndics (master.Tiers); a
// publisher that cannot tell gives the plain behaviour.
func (s *Session) newTiers(ctx context.Context, jid string) *master.Tiers {
	var info master.SyndicInfo
	if a, ok := s.Pub.(syndicAsker); ok {
		info, _ = a.Syndics(ctx)
	}
	return master.NewTiers(info, jid)
}

// OrderMasters reports whether the session's master has syndics below
// it (order_masters: True): a target that matches none of its own
// minions may still reach theirs, so the CLI does not stop at "No
// minions matched" (salt/client/__init__.py _check_pub_data).
func (s *Session) OrderMasters(ctx context.Context) bool {
	a, ok := s.Pub.(syndicAsker)
	if !ok {
		return false
	}
	info, err := a.Syndics(ctx)
	return err == nil && info.OrderMasters
}
