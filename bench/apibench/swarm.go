package main

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/bench/internal/swarm"
	"github.com/brinesalt/brine/internal/config"
	_ "github.com/brinesalt/brine/state/modules/test"
)

// startSwarm starts n minions named api-00000… against the master at
// host with the given ports (Brine's or Salt's: the same minions serve
// both columns, so only the API and master differ). Keys are kept in
// keydir between runs. With zmqFiltering the minions subscribe to
// their own topic (the master's zmq_filtering must be on too); with
// unsigned they take publications without the master's signature (a
// master with sign_pub_messages: False).
func startSwarm(ctx context.Context, n int, host string, retPort, pubPort int, keydir, workdir string, zmqFiltering, unsigned bool) (*swarm.Swarm, error) {
	ks, err := swarm.Keys(keydir, n)
	if err != nil {
		return nil, err
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("api-%05d", i)
	}
	return swarm.Start(ctx, swarm.Options{IDs: ids, Keys: ks, Host: host, RetPort: retPort, PubPort: pubPort, WorkDir: workdir,
		Configure: func(c *config.Minion) { c.ZMQFiltering, c.SignPubMessages = zmqFiltering, !unsigned }})
}
