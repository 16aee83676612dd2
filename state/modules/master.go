package modules

import (
	"context"
	"errors"

	"github.com/brinesalt/brine/internal/ordered"
)

// MasterChannel is the minion's encrypted request channel to its master
// (salt.channel.client.ReqChannel): the mine and publish modules send
// their _mine*, minion_pub, minion_runner and pub_ret loads through it.
// The running minion and a connected salt-call provide it.
type MasterChannel interface {
	// MasterRequest sends load (its "cmd" names the master's handler)
	// and returns the master's decrypted answer.
	MasterRequest(ctx context.Context, load *ordered.Map) (any, error)
}

// ErrNoMaster is a function that needs the master run where there is
// none: salt-call --local, salt-ssh, the thin binary.
var ErrNoMaster = errors.New("no master connection: the function needs a minion connected to a master")

// Master returns the job's channel to the master: Env.Master, else the
// minion daemon running the job when it has one.
func (e *Env) Master() (MasterChannel, error) {
	if e != nil && e.MasterLink != nil {
		return e.MasterLink, nil
	}
	if e != nil {
		if mc, ok := e.Minion.(MasterChannel); ok {
			return mc, nil
		}
	}
	return nil, ErrNoMaster
}
