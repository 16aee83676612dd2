package main

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/bench/internal/swarm"
	_ "github.com/brinesalt/brine/state/modules/test"
)

// startSwarm starts n minions named api-00000… against the master at
// host with the given ports (Brine's or Salt's: the same minions serve
// both columns, so only the API and master differ). Keys are kept in
// keydir between runs.
func startSwarm(ctx context.Context, n int, host string, retPort, pubPort int, keydir, workdir string) (*swarm.Swarm, error) {
	ks, err := swarm.Keys(keydir, n)
	if err != nil {
		return nil, err
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("api-%05d", i)
	}
	return swarm.Start(ctx, swarm.Options{IDs: ids, Keys: ks, Host: host, RetPort: retPort, PubPort: pubPort, WorkDir: workdir})
}
