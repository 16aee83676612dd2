package main

import (
	"context"
	"crypto/rsa"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/minion"
	_ "github.com/brinesalt/brine/state/modules/test"
)

// swarm is N Brine minions in this process, each with its own RSA key,
// session and ZeroMQ sockets, signed in to one master (Brine's or Salt's:
// the same minions serve both columns, so only the API and master differ).
type swarm struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ids    []string
}

// startSwarm starts n minions named api-00000… against the master at
// host with the given ports. Keys are kept in keydir between runs, since
// generating 2048-bit keys dominates a cold start.
func startSwarm(ctx context.Context, n int, host string, retPort, pubPort int, keydir, workdir string) (*swarm, error) {
	ks, err := swarmKeys(keydir, n)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &swarm{cancel: cancel}
	for i := range n {
		id := fmt.Sprintf("api-%05d", i)
		c := config.DefaultMinion(workdir)
		c.ID, c.Masters, c.MasterPort, c.PublishPort = id, []string{host}, retPort, pubPort
		c.PKIDir, c.CacheDir = filepath.Join(workdir, "minion"), filepath.Join(workdir, "minion-cache")
		c.AcceptanceWaitTime, c.AuthTimeout = time.Second, 5*time.Second
		grains := ordered.FromPairs("id", id, "os", "Debian", "kernel", "Linux")
		mn, err := minion.New(minion.Options{Config: c, Key: ks[i], PubPEM: string(crypt.EncodePublicKey(&ks[i].PublicKey)), NoDisk: true,
			Log:    slog.New(slog.DiscardHandler),
			Grains: func(context.Context) (*ordered.Map, error) { return grains.Copy(), nil }})
		if err != nil {
			s.stop()
			return nil, fmt.Errorf("minion %s: %w", id, err)
		}
		s.ids = append(s.ids, id)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_ = mn.Run(ctx)
		}()
	}
	return s, nil
}

// stop ends every minion and waits for them.
func (s *swarm) stop() {
	s.cancel()
	s.wg.Wait()
}

// swarmKeys loads or makes n keys in dir (m00000.pem …, the layout
// bench/minionswarm uses, so both share one key cache).
func swarmKeys(dir string, n int) ([]*rsa.PrivateKey, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make key dir: %w", err)
	}
	out := make([]*rsa.PrivateKey, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			path := filepath.Join(dir, fmt.Sprintf("m%05d.pem", i))
			if k, err := crypt.LoadPrivateKey(path, ""); err == nil {
				out[i] = k
				return
			}
			k, err := crypt.GenerateKey(2048)
			if err != nil {
				errs[i] = err
				return
			}
			out[i] = k
			errs[i] = crypt.WriteFileAtomic(path, crypt.EncodePrivateKey(k), 0o600)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("minion key: %w", err)
		}
	}
	return out, nil
}
