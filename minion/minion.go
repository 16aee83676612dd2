package minion

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinesalt/brine/internal/beacons"
	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/reactor"
	"github.com/brinesalt/brine/internal/schedule"
	"github.com/brinesalt/brine/internal/transport"
	"github.com/brinesalt/brine/state/returners"
	"github.com/brinesalt/brine/thin"
	"github.com/brinesalt/brine/thin/frame"
)

// Options configure a Minion.
type Options struct {
	Config *config.Minion
	Log    *slog.Logger
	// Execute runs one job; nil means thin.Execute with the minion's
	// grains.
	Execute func(ctx context.Context, job *frame.Job) *frame.Result
	// Grains returns the minion's grains; nil means grains.Gather.
	Grains func(ctx context.Context) (*ordered.Map, error)
	// Key is the minion's private key; nil loads or generates
	// pki_dir/minion.pem.
	Key *rsa.PrivateKey
	// PubPEM is the public key text sent on _auth when Key is given.
	PubPEM string
	// MasterPub pins the master key in memory when no pki_dir file is
	// wanted (the swarm benchmark); "" uses minion_master.pub.
	NoDisk bool
	// Returners are the returners jobs can name; nil means
	// returners.Default.
	Returners *returners.Registry
	// Relay, when set, receives every publication instead of the job
	// runner, untargeted: a syndic relays each job to its tier
	// (salt/minion.py Syndic._process_cmd_socket). See RunRelay.
	Relay func(ctx context.Context, load *ordered.Map)
	// MasterPubName names the pinned master key file in pki_dir;
	// "" is minion_master.pub (a syndic's is syndic_master.pub).
	MasterPubName string
	// StartGate, when set, bounds how many minions sharing it are
	// starting at once: a minion holds a slot from its first sign-in to
	// the end of its first pillar refresh, the RSA-heavy part of its
	// start. Thousands of minions in one process (the swarm benchmarks)
	// otherwise starve each other of CPU until the master's replies
	// wait past auth_timeout unread and every sign-in is done again, on
	// both sides; a real minion has its own CPU. A minion whose key
	// waits for acceptance holds its slot meanwhile. nil: no bound.
	StartGate chan struct{}
}

// ErrMasterKeyChanged is the master offering a key other than the pinned
// one; the minion stops rather than trust it.
var ErrMasterKeyChanged = pki.ErrMasterKeyChanged

// Minion is a running salt-minion.
type Minion struct {
	o    Options
	c    *config.Minion
	log  *slog.Logger
	id   string
	key  *rsa.PrivateKey
	pub  string
	pki  *pki.Minion
	opts *ordered.Map

	authMu    sync.Mutex
	stateMu   sync.RWMutex
	st        *authState
	authGen   int
	pinnedPub string // master key in memory when NoDisk

	req       *transport.Req
	masters   []masterEntry // the master list, shuffled by random_master
	masterIdx atomic.Int64  // the current master in masters
	alive     aliveState    // master_alive_interval checks (alive.go)

	tokOnce sync.Once
	tok     []byte
	tokErr  error

	grains *ordered.Map
	pillar *ordered.Map
	dataMu sync.RWMutex
	// refreshMu serialises refreshes, so a gather and the pillar
	// compiled with it are not interleaved with another's.
	refreshMu sync.Mutex

	rq *returnQueue // returns not yet delivered (retqueue.go)

	jobs sync.WaitGroup

	schedMu sync.Mutex
	sched   *schedule.Schedule
	beacons *beacons.Manager
	// reactor is the reactor engine (engines.go), nil unless the
	// engines option starts one.
	reactor *reactor.Reactor

	// started fires salt/minion/<id>/start once the publish socket is
	// subscribed (sub.go), so a reaction to it reaches the minion.
	started sync.Once
}

type authState struct {
	aes        *crypt.Crypticle
	session    *crypt.Crypticle
	masterKey  *rsa.PublicKey
	pubPort    int
	generation int
}

// New prepares a minion: its id, keys and options.
func New(o Options) (*Minion, error) {
	c := o.Config
	if c == nil {
		return nil, errors.New("new minion: no configuration")
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Minion{o: o, c: c, log: log, id: c.ID, pki: pki.NewMinion(c.PKIDir)}
	if m.id == "" {
		return nil, errors.New("new minion: no id configured")
	}
	m.log = log.With("minion", m.id)
	if o.MasterPubName != "" {
		m.pki.MasterPubName = o.MasterPubName
	}
	if o.Key != nil {
		m.key, m.pub = o.Key, crypt.CleanKey(o.PubPEM)
	} else {
		k, err := m.pki.Key(c.KeySize)
		if err != nil {
			return nil, fmt.Errorf("new minion %s: %w", m.id, err)
		}
		pub, err := m.pki.PubString()
		if err != nil {
			return nil, fmt.Errorf("new minion %s: %w", m.id, err)
		}
		m.key, m.pub = k, pub
	}
	if err := checkMasterType(c); err != nil {
		return nil, fmt.Errorf("new minion %s: %w", m.id, err)
	}
	masters, err := masterList(c)
	if err != nil {
		return nil, fmt.Errorf("new minion %s: %w", m.id, err)
	}
	shuffleMasters(c, masters)
	m.masters = masters
	m.rq = newReturnQueue(m.queueDir(), m.log)
	m.opts = c.Raw.Copy()
	m.opts.Set("id", m.id)
	m.opts.Set("cachedir", c.CacheDir)
	m.opts.Set("pki_dir", c.PKIDir)
	m.opts.Set("conf_file", c.File)
	m.opts.Set("config_dir", c.Dir)
	// No identity on the request socket: Salt sets ZMQ_IDENTITY on the
	// SUB socket only (salt/transport/zeromq.py), and a ROUTER ignores a
	// second peer with an identity already connected, so a salt-call
	// beside the running minion of the same id would never be answered.
	m.req = &transport.Req{Addr: m.masterAddr(c.MasterPort)}
	return m, nil
}

// ID is the minion id.
func (m *Minion) ID() string { return m.id }

func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// jitter returns a random duration in [0, d).
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d)))
	if err != nil {
		return 0
	}
	return time.Duration(n.Int64())
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// Run signs in, subscribes and serves jobs until ctx ends. It returns
// an error only for what the minion cannot recover from, such as a
// changed master key.
func (m *Minion) Run(ctx context.Context) error {
	defer m.req.Close()
	if err := m.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.sendReturns(ctx)
	}()
	m.startEngines(ctx, &wg)
	sched := m.newSchedule()
	wg.Add(1)
	go func() {
		defer wg.Done()
		sched.Loop(ctx)
	}()
	bcn := m.newBeacons()
	wg.Add(1)
	go func() {
		defer wg.Done()
		bcn.Loop(ctx)
	}()
	if every := m.c.GrainsRefreshEvery; every > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.refreshGrainsEvery(ctx, every)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.mineLoop(ctx)
	}()
	err := m.subscribe(ctx)
	wg.Wait()
	m.jobs.Wait()
	// Jobs that ended after the sender stopped queued their returns
	// too: keep them for the next run.
	m.rq.persist()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// start is the first sign-in, grains and pillar, holding a StartGate
// slot when there is a gate.
func (m *Minion) start(ctx context.Context) error {
	if g := m.o.StartGate; g != nil {
		select {
		case g <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-g }()
	}
	if _, err := m.authenticate(ctx, 0); err != nil {
		return err
	}
	if err := m.loadGrains(ctx); err != nil {
		m.log.Warn("grains", logattr.Err, err)
	}
	if err := m.refreshPillar(ctx); err != nil {
		m.log.Warn("pillar refresh failed", logattr.Err, err)
	}
	return nil
}

// loadGrains gathers the grains (Options.Grains, or Salt's sequence of
// core grains, synced custom grains, the grains file and the grains
// option) and keeps them for matching and jobs.
func (m *Minion) loadGrains(ctx context.Context) error {
	var g *ordered.Map
	var err error
	if m.o.Grains != nil {
		g, err = m.o.Grains(ctx)
	} else {
		g = thin.GatherGrains(ctx, m.opts, m.log)
	}
	if g == nil {
		g = ordered.New()
	}
	g.Set("id", m.id)
	m.dataMu.Lock()
	m.grains = g
	m.dataMu.Unlock()
	return err
}

// refreshPillar asks the master for this minion's pillar, sending the
// grains the master caches and matches on. On an error the minion keeps
// the pillar it had, as Salt's pillar_refresh does.
func (m *Minion) refreshPillar(ctx context.Context) error {
	m.dataMu.RLock()
	g := m.grains
	m.dataMu.RUnlock()
	p, err := m.PillarSource(g).CompilePillar(ctx, nil, "")
	if err != nil {
		return fmt.Errorf("refresh pillar: %w", err)
	}
	m.dataMu.Lock()
	m.pillar = p
	m.dataMu.Unlock()
	m.schedulePillar()
	m.beaconsPillar()
	return nil
}

// fireStart sends salt/minion/<id>/start (and the legacy minion_start)
// as Minion._fire_master_minion_start does.
func (m *Minion) fireStart(ctx context.Context) {
	msg := fmt.Sprintf("Minion %s started at %s", m.id, time.Now().Format("Mon Jan _2 15:04:05 2006"))
	evs := []any{}
	for _, tag := range []string{"minion_start", protocol.MinionStartTag(m.id)} {
		evs = append(evs, ordered.FromPairs("tag", tag, "data", ordered.FromPairs("id", m.id, "data", msg, "cmd", protocol.CmdMinionEvent, "tag", tag)))
	}
	load := ordered.FromPairs("id", m.id, "events", evs, "cmd", protocol.CmdMinionEvent)
	if _, err := m.request(ctx, load, false); err != nil {
		m.log.Warn("start event not sent", logattr.Err, err)
	}
}
