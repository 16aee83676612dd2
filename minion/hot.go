package minion

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logattr"
)

// Hot is a hot multi-master minion (master: a list, master_type str):
// one Minion per master, as Salt's MinionManager runs one Minion object
// per master. Each signs in on its own (its own AES and session keys),
// subscribes to its master, compiles its pillar from it, runs what it
// publishes and returns to it alone; a master that is down holds up
// only its own Minion, whose returns wait in its queue (retqueue.go)
// until the master is back. Jobs and returns are kept apart by the
// master's address and port, so two masters on one IP do not see each
// other's returns (Salt keys them by host only).
type Hot struct {
	minions []*Minion
}

// IsHot reports whether c asks for hot multi-master: more than one
// master with master_type str.
func IsHot(c *config.Minion) bool {
	return (c.MasterType == "" || c.MasterType == MasterTypeStr) && len(c.Masters) > 1
}

// NewHot prepares one Minion per master of o.Config's list. They share
// the minion's key pair (loaded once) and pinned master key file.
func NewHot(o Options) (*Hot, error) {
	c := o.Config
	if c == nil {
		return nil, errors.New("new minion: no configuration")
	}
	if err := checkMasterType(c); err != nil {
		return nil, fmt.Errorf("new minion %s: %w", c.ID, err)
	}
	list, err := masterList(c)
	if err != nil {
		return nil, fmt.Errorf("new minion %s: %w", c.ID, err)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	first, err := newFor(o, list[0])
	if err != nil {
		return nil, err
	}
	h := &Hot{minions: []*Minion{first}}
	o.Key, o.PubPEM = first.key, first.pub
	seen := map[string]bool{list[0].String(): true}
	for _, e := range list[1:] {
		if seen[e.String()] {
			return nil, fmt.Errorf("config %s: master %s is listed twice", c.File, e)
		}
		seen[e.String()] = true
		mn, err := newFor(o, e)
		if err != nil {
			return nil, err
		}
		h.minions = append(h.minions, mn)
	}
	return h, nil
}

// newFor is the Minion of master e: a copy of the config with that
// master alone, and opts["master"] and opts["master_port"] its own, as
// MinionManager's per-master opts have.
func newFor(o Options, e masterEntry) (*Minion, error) {
	c := *o.Config
	c.Masters = []string{e.String()}
	c.MasterPort = e.port
	c.MasterURIFormat = "default" // e.String() is host:port, parsed already
	o.Config = &c
	o.Log = o.Log.With("master", e.String())
	mn, err := New(o)
	if err != nil {
		return nil, err
	}
	mn.opts.Set("master", e.host)
	mn.opts.Set("master_port", e.port)
	return mn, nil
}

// Minions are the per-master minions, in the order of the master list.
func (h *Hot) Minions() []*Minion { return h.minions }

// Run runs every per-master minion until ctx ends. One that stops with
// an error (a changed master key) is logged and the others go on, as
// in Salt; the errors are returned together at the end.
func (h *Hot) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(h.minions))
	for i, mn := range h.minions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := mn.Run(ctx); err != nil {
				mn.log.Error("minion for this master stopped", logattr.Err, err)
				errs[i] = fmt.Errorf("master %s: %w", mn.current(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
