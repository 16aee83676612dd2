package minion

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/transport"
)

// errMasterDead and errFailback end a publish connection: the alive
// check found the master gone (Salt's __master_disconnected), or the
// first master of a failover list answers again (__master_failback).
var (
	errMasterDead = errors.New("master did not answer the alive check")
	errFailback   = errors.New("the first master answers again, failing back")
)

// aliveState holds the probe sockets of the alive and failback checks,
// kept between checks so each is one request, not a new connection.
type aliveState struct {
	mu     sync.Mutex
	probes map[string]*transport.Req
}

func (a *aliveState) probe(addr string) *transport.Req {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.probes == nil {
		a.probes = map[string]*transport.Req{}
	}
	r := a.probes[addr]
	if r == nil {
		r = &transport.Req{Addr: addr}
		a.probes[addr] = r
	}
	return r
}

func (a *aliveState) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.probes {
		r.Close()
	}
	a.probes = nil
}

// pingMaster is status.ping_master: a clear {"cmd": "ping"} to addr,
// true when anything comes back within auth_timeout.
func (m *Minion) pingMaster(ctx context.Context, addr string) bool {
	body, err := protocol.Marshal(&protocol.Request{Enc: protocol.EncClear, Load: ordered.FromPairs("cmd", protocol.CmdPing), Version: protocol.RequestVersion})
	if err != nil {
		return false
	}
	t := m.c.AuthTimeout
	if t <= 0 {
		t = 5 * time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	_, err = m.alive.probe(addr).Do(pctx, body)
	return err == nil
}

// failbackInterval is master_failback_interval, which eval_master sets
// to master_alive_interval when it is 0.
func (m *Minion) failbackInterval() time.Duration {
	if m.c.MasterFailbackInterval > 0 {
		return m.c.MasterFailbackInterval
	}
	return m.c.MasterAliveInterval
}

// watchMaster runs beside a publish connection: every
// master_alive_interval it pings the current master's request port
// (Salt's __master_alive job, status.master), ending the connection
// with errMasterDead when it does not answer; a failover minion that
// is not on the first master with master_failback pings the first
// master every master_failback_interval and ends it with errFailback
// once it answers. Salt's status.master looks for an ESTABLISHED
// connection to the publish port with the minion's own publish_port
// setting; a lost publish connection ends readPublications by itself.
func (m *Minion) watchMaster(ctx context.Context, end context.CancelCauseFunc) {
	alive := m.c.MasterAliveInterval
	var aliveC, backC <-chan time.Time
	if alive > 0 {
		t := time.NewTicker(alive)
		defer t.Stop()
		aliveC = t.C
	}
	if m.failover() && m.c.MasterFailback && m.masterIdx.Load() != 0 && m.failbackInterval() > 0 {
		t := time.NewTicker(m.failbackInterval())
		defer t.Stop()
		backC = t.C
	}
	if aliveC == nil && backC == nil {
		return
	}
	cur := m.masterAddr(m.c.MasterPort)
	first := m.masters[0].String()
	for {
		select {
		case <-ctx.Done():
			return
		case <-aliveC:
			if !m.pingMaster(ctx, cur) && ctx.Err() == nil {
				m.log.Info("Connection to master lost", "master", cur)
				end(errMasterDead)
				return
			}
		case <-backC:
			if m.pingMaster(ctx, first) && ctx.Err() == nil {
				m.log.Info("The first master answers again", "master", first)
				end(errFailback)
				return
			}
		}
	}
}

// switchMaster picks the master to sign in to after a publish
// connection ended with cause: the first master on failback, the next
// one after a failover master was lost (eval_master with failed=True
// moves it to the end of the list). It reports whether the minion
// changed master, so it fires its start event to the new one.
func (m *Minion) switchMaster(cause error) bool {
	switch {
	case errors.Is(cause, errFailback):
		m.setMaster(0)
		m.log.Info("failing back to the first master", "master", m.req.Address())
		return true
	case m.failover() && len(m.masters) > 1:
		m.log.Info("Trying to tune in to next master from master-list")
		m.nextMaster()
		return true
	}
	return false
}
