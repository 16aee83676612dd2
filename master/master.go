package master

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/transport"
)

// Master is a running salt-master.
type Master struct {
	o    Options
	log  *slog.Logger
	pki  *pki.Master
	key  *rsa.PrivateKey
	pub  string
	jobs *jobcache.Cache
	bus  *Bus

	aesMu  sync.RWMutex
	aes    *crypt.Crypticle
	serial atomic.Int64

	sessMu   sync.Mutex
	sessions map[string]session

	keyMu      sync.Mutex
	keys       map[string]minionKey // parsed accepted keys by id
	seenMu     sync.Mutex
	seen       map[string]time.Time // request nonces, for replay refusal
	authed     sync.Map             // id -> time of last accepted _auth
	dataMu     sync.RWMutex
	data       map[string]minionData // minion data cache (grains, pillar)
	pubSock    *transport.Publisher
	req        *transport.Router
	local      net.Listener
	localMu    sync.Mutex
	localConns map[net.Conn]struct{}
	wg         sync.WaitGroup
	stopMaint  context.CancelFunc
}

type session struct {
	mtime time.Time
	c     *crypt.Crypticle
}

type minionKey struct {
	pem string
	key *rsa.PublicKey
}

// New prepares a master: directories, keys and the AES session key.
func New(o Options, log *slog.Logger) (*Master, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := o.ensureDirs(); err != nil {
		return nil, fmt.Errorf("start master: %w", err)
	}
	p := pki.NewMaster(o.PKIDir)
	p.CacheDir = o.CacheDir
	p.RotateAESKey = o.RotateAESKey
	if err := p.Init(o.KeySize); err != nil {
		return nil, fmt.Errorf("start master: %w", err)
	}
	key, pub, err := p.Keys(o.KeySize, "")
	if err != nil {
		return nil, fmt.Errorf("start master: %w", err)
	}
	m := &Master{o: o, log: log, pki: p, key: key, pub: pub, jobs: jobcache.New(o.CacheDir), bus: NewBus(),
		sessions: map[string]session{}, keys: map[string]minionKey{}, seen: map[string]time.Time{}, data: map[string]minionData{}}
	p.Events = func(e pki.Event) { m.bus.Fire(e.Tag, e.Data) }
	if err := m.rotateAES("start"); err != nil {
		return nil, err
	}
	return m, nil
}

// Bus is the master's event bus.
func (m *Master) Bus() *Bus { return m.bus }

// rotateAES replaces the publish key (salt.master.SMaster.rotate_secrets);
// minions fail to decrypt the next publication and sign in again.
func (m *Master) rotateAES(why string) error {
	c, err := crypt.NewCrypticle(crypt.GenerateKeyString())
	if err != nil {
		return fmt.Errorf("rotate aes key: %w", err)
	}
	m.aesMu.Lock()
	m.aes = c
	m.aesMu.Unlock()
	m.log.Info("AES key rotated", "reason", why)
	return nil
}

func (m *Master) aesKey() *crypt.Crypticle {
	m.aesMu.RLock()
	defer m.aesMu.RUnlock()
	return m.aes
}

// sessionKey is ReqServerChannel.session_key: a per-minion key kept in
// cachedir/sessions/<id>, renewed after publish_session.
func (m *Master) sessionKey(id string) (*crypt.Crypticle, error) {
	now := time.Now()
	m.sessMu.Lock()
	defer m.sessMu.Unlock()
	if s, ok := m.sessions[id]; ok && now.Sub(s.mtime) < m.o.PublishSession {
		return s.c, nil
	}
	path := filepath.Join(m.o.CacheDir, "sessions", id)
	st, err := os.Stat(path)
	if err != nil || now.Sub(st.ModTime()) > m.o.PublishSession {
		if _, err := crypt.WriteKeyFile(path); err != nil {
			return nil, fmt.Errorf("session key %s: %w", id, err)
		}
		st, err = os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("session key %s: %w", id, err)
		}
	}
	ks, err := crypt.ReadKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("session key %s: %w", id, err)
	}
	c, err := crypt.NewCrypticle(ks)
	if err != nil {
		return nil, fmt.Errorf("session key %s: %w", id, err)
	}
	m.sessions[id] = session{mtime: st.ModTime(), c: c}
	return c, nil
}

// dropSession forgets a minion's session key (its key was removed).
func (m *Master) dropSession(id string) {
	m.sessMu.Lock()
	delete(m.sessions, id)
	m.sessMu.Unlock()
	_ = os.Remove(filepath.Join(m.o.CacheDir, "sessions", id))
}

// acceptedKey returns the minion's accepted public key, re-read when the
// file changes; ok is false when the minion is not accepted.
func (m *Master) acceptedKey(id string) (*rsa.PublicKey, bool) {
	data, err := os.ReadFile(m.pki.Path(pki.Accepted, id))
	if err != nil {
		return nil, false
	}
	m.keyMu.Lock()
	defer m.keyMu.Unlock()
	if k, ok := m.keys[id]; ok && k.pem == string(data) {
		return k.key, true
	}
	k, err := crypt.ParsePublicKey(data)
	if err != nil {
		return nil, false
	}
	m.keys[id] = minionKey{pem: string(data), key: k}
	return k, true
}

// Run binds the sockets and serves until ctx ends.
func (m *Master) Run(ctx context.Context) error {
	if err := m.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	m.Stop()
	return nil
}

// Start binds the publish, request and local sockets and starts the
// maintenance loop; Stop ends them.
func (m *Master) Start(ctx context.Context) error {
	ip := m.o.Interface
	pub, err := transport.ListenPub(net.JoinHostPort(ip, strconv.Itoa(m.o.PublishPort)), transport.PubOptions{Log: m.log})
	if err != nil {
		return fmt.Errorf("start master: %w", err)
	}
	m.pubSock = pub
	req, err := transport.ListenRouter(ctx, net.JoinHostPort(ip, strconv.Itoa(m.o.RetPort)),
		transport.RouterOptions{Workers: m.o.WorkerThreads, MaxMessage: m.o.MaxMessage, Log: m.log}, m.handle)
	if err != nil {
		pub.Close()
		return fmt.Errorf("start master: %w", err)
	}
	m.req = req
	if err := m.listenLocal(ctx); err != nil {
		pub.Close()
		req.Close()
		return fmt.Errorf("start master: %w", err)
	}
	mctx, cancel := context.WithCancel(ctx)
	m.stopMaint = cancel
	m.wg.Add(1)
	go m.maintenance(mctx)
	m.log.Info("master started", "publish", pub.Addr().String(), "ret", req.Addr().String())
	return nil
}

// Stop closes the sockets and waits for the master's goroutines.
func (m *Master) Stop() {
	if m.stopMaint != nil {
		m.stopMaint()
	}
	if m.local != nil {
		m.local.Close()
		m.localMu.Lock()
		for c := range m.localConns {
			c.Close()
		}
		m.localMu.Unlock()
	}
	if m.req != nil {
		m.req.Close()
	}
	if m.pubSock != nil {
		m.pubSock.Close()
	}
	m.wg.Wait()
}

// Subscribers is the number of connected publish subscribers.
func (m *Master) Subscribers() int { return m.pubSock.Subscribers() }

// PublishAddr and RetAddr are the bound socket addresses.
func (m *Master) PublishAddr() net.Addr { return m.pubSock.Addr() }

// RetAddr is the bound request socket address.
func (m *Master) RetAddr() net.Addr { return m.req.Addr() }

// maintenance is salt/master.py Maintenance: rotate the AES key when
// salt-key left .dfn (a key was deleted or rejected) or publish_session
// passed, forget sessions of removed keys, clean old jobs and nonces.
func (m *Master) maintenance(ctx context.Context) {
	defer m.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastRotate, lastClean := time.Now(), time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			dfn := filepath.Join(m.o.CacheDir, ".dfn")
			if _, err := os.Stat(dfn); err == nil {
				_ = os.Remove(dfn)
				m.forgetRemovedKeys()
				if m.o.RotateAESKey {
					_ = m.rotateAES("key removed")
					lastRotate = now
				}
			} else if !errors.Is(err, fs.ErrNotExist) {
				m.log.Warn("check .dfn", "err", err)
			}
			if m.o.PublishSession > 0 && now.Sub(lastRotate) > m.o.PublishSession {
				_ = m.rotateAES("publish_session")
				lastRotate = now
			}
			if now.Sub(lastClean) > time.Hour {
				lastClean = now
				if n, err := m.jobs.Clean(m.o.KeepJobs, now); err != nil {
					m.log.Warn("clean job cache", "err", err)
				} else if n > 0 {
					m.log.Info("cleaned job cache", "removed", n)
				}
			}
			m.pruneNonces(now)
		}
	}
}

func (m *Master) forgetRemovedKeys() {
	m.keyMu.Lock()
	var gone []string
	for id := range m.keys {
		if _, err := os.Stat(m.pki.Path(pki.Accepted, id)); err != nil {
			gone = append(gone, id)
			delete(m.keys, id)
		}
	}
	m.keyMu.Unlock()
	for _, id := range gone {
		m.dropSession(id)
		m.authed.Delete(id)
	}
}
