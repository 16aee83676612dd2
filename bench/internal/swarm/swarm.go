// Package swarm runs many Brine minions in one process for the
// benchmarks: each with its own RSA key, session and ZeroMQ sockets,
// signed in to one master, keeping no files but a shared work dir.
package swarm

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
)

// Swarm is a set of running minions.
type Swarm struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// IDs are the minions' ids, in start order.
	IDs []string
}

// Options say what to start.
type Options struct {
	// IDs are the minions' ids; Keys[i] is IDs[i]'s key.
	IDs  []string
	Keys []*rsa.PrivateKey
	// Host, RetPort and PubPort are the master's address.
	Host             string
	RetPort, PubPort int
	// WorkDir holds the minions' (shared) pki and cache directories.
	WorkDir string
	// Log is the minions' logger (nil: discarded).
	Log *slog.Logger
	// Configure, when set, edits each minion's configuration before it
	// starts (zmq_filtering, sign_pub_messages …).
	Configure func(*config.Minion)
}

// Start starts the minions, with the grains id, os Debian, kernel Linux.
func Start(ctx context.Context, o Options) (*Swarm, error) {
	if len(o.Keys) < len(o.IDs) {
		return nil, fmt.Errorf("start swarm: %d keys for %d minions", len(o.Keys), len(o.IDs))
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Swarm{cancel: cancel}
	for i, id := range o.IDs {
		c := config.DefaultMinion(o.WorkDir)
		c.ID, c.Masters, c.MasterPort, c.PublishPort = id, []string{o.Host}, o.RetPort, o.PubPort
		c.PKIDir, c.CacheDir = filepath.Join(o.WorkDir, "minion"), filepath.Join(o.WorkDir, "minion-cache")
		c.AcceptanceWaitTime, c.AuthTimeout = time.Second, 5*time.Second
		if o.Configure != nil {
			o.Configure(c)
		}
		grains := ordered.FromPairs("id", id, "os", "Debian", "kernel", "Linux")
		key := o.Keys[i]
		mn, err := minion.New(minion.Options{Config: c, Key: key, PubPEM: string(crypt.EncodePublicKey(&key.PublicKey)), NoDisk: true,
			Log:    log,
			Grains: func(context.Context) (*ordered.Map, error) { return grains.Copy(), nil }})
		if err != nil {
			s.Stop()
			return nil, fmt.Errorf("minion %s: %w", id, err)
		}
		s.IDs = append(s.IDs, id)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_ = mn.Run(ctx)
		}()
	}
	return s, nil
}

// Stop ends every minion and waits for them.
func (s *Swarm) Stop() {
	s.cancel()
	s.wg.Wait()
}

// Cycled is n keys of which only the first distinct are loaded or made
// (Keys), key i being key i mod distinct; distinct <= 0 or >= n is n
// distinct keys. A 2048-bit key takes about 150 ms of CPU to make, so
// 20,000 distinct keys are 50 CPU-minutes before the first sign-in;
// the sign-in's RSA work, on the master and on the minion, is the same
// for a shared key (nothing caches by key), so a big swarm may share.
func Cycled(dir string, n, distinct int) ([]*rsa.PrivateKey, error) {
	if distinct <= 0 || distinct >= n {
		return Keys(dir, n)
	}
	ks, err := Keys(dir, distinct)
	if err != nil {
		return nil, err
	}
	out := make([]*rsa.PrivateKey, n)
	for i := range out {
		out[i] = ks[i%distinct]
	}
	return out, nil
}

// Keys loads or makes n keys in dir (m00000.pem …, the layout
// bench/minionswarm uses, so every benchmark shares one key cache):
// generating 2048-bit keys dominates a cold start.
func Keys(dir string, n int) ([]*rsa.PrivateKey, error) {
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
