package master

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"hash/fnv"
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
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/transport"
)

// Master is a running salt-master.
type Master struct {
	o     Options
	log   *slog.Logger
	pki   *pki.Master
	key   *rsa.PrivateKey
	pub   string
	jobs  *jobcache.Cache
	bus   *Bus
	eauth *eauthState // external_auth, tokens, publisher ACLs (eauth.go)

	aesMu  sync.RWMutex
	aes    *crypt.Crypticle
	aesSig []byte // crypt.AESSignature of aes, sent in every auth reply
	serial atomic.Int64

	sessMu   sync.Mutex
	sessions map[string]session
	idLocks  [64]sync.Mutex // by hash of minion id, see idLock

	keyMu      sync.Mutex
	keys       map[string]minionKey // parsed accepted keys by id
	seenMu     sync.Mutex
	seen       map[string]time.Time // request nonces, for replay refusal
	authed     sync.Map             // id -> time of last accepted _auth
	dataMu     sync.RWMutex
	mineMu     sync.Mutex            // serialises read-modify-write of mine banks
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
	if m.eauth, err = newEauthState(o, log); err != nil {
		return nil, fmt.Errorf("start master: %w", err)
	}
	if err := m.rotateAES("start"); err != nil {
		return nil, err
	}
	return m, nil
}

// Bus is the master's event bus.
func (m *Master) Bus() *Bus { return m.bus }

// rotateOrWarn is rotateAES for the maintenance loop, which cannot stop
// for a failed rotation: it logs the failure, and the old key stays in use.
func (m *Master) rotateOrWarn(why string) {
	if err := m.rotateAES(why); err != nil {
		m.log.Warn("AES key not rotated; the previous key stays in use", "reason", why, logattr.Err, err)
	}
}

// rotateAES replaces the publish key (salt.master.SMaster.rotate_secrets);
// minions fail to decrypt the next publication and sign in again.
func (m *Master) rotateAES(why string) error {
	ks := crypt.GenerateKeyString()
	c, err := crypt.NewCrypticle(ks)
	if err != nil {
		return fmt.Errorf("rotate aes key: %w", err)
	}
	sig, err := crypt.AESSignature(m.key, ks)
	if err != nil {
		return fmt.Errorf("rotate aes key: %w", err)
	}
	m.aesMu.Lock()
	m.aes, m.aesSig = c, sig
	m.aesMu.Unlock()
	m.log.Info("AES key rotated", "reason", why)
	return nil
}

func (m *Master) aesKey() *crypt.Crypticle {
	m.aesMu.RLock()
	defer m.aesMu.RUnlock()
	return m.aes
}

// aesKeyAndSig returns the AES key with its signature, read together so
// a rotation cannot pair one key with the other's signature.
func (m *Master) aesKeyAndSig() (*crypt.Crypticle, []byte) {
	m.aesMu.RLock()
	defer m.aesMu.RUnlock()
	return m.aes, m.aesSig
}

// sessionKey is ReqServerChannel.session_key: a per-minion key kept in
// cachedir/sessions/<id>, renewed after publish_session. Only the id's
// stripe lock is held while the file is written, so sign-ins of
// different minions do not wait on each other's disk writes; a file that
// is empty or damaged (a crash before it reached the disk) is replaced.
func (m *Master) sessionKey(id string) (*crypt.Crypticle, error) {
	now := time.Now()
	m.sessMu.Lock()
	s, ok := m.sessions[id]
	m.sessMu.Unlock()
	if ok && now.Sub(s.mtime) < m.o.PublishSession {
		return s.c, nil
	}
	l := m.idLock(id)
	l.Lock()
	defer l.Unlock()
	m.sessMu.Lock()
	s, ok = m.sessions[id]
	m.sessMu.Unlock()
	if ok && now.Sub(s.mtime) < m.o.PublishSession {
		return s.c, nil // another sign-in of this minion made it meanwhile
	}
	path := filepath.Join(m.o.CacheDir, "sessions", id)
	s, err := readSession(path, now, m.o.PublishSession)
	if err != nil {
		if _, err := crypt.WriteKeyFile(path); err != nil {
			return nil, fmt.Errorf("session key %s: %w", id, err)
		}
		if s, err = readSession(path, now, m.o.PublishSession); err != nil {
			return nil, fmt.Errorf("session key %s: %w", id, err)
		}
	}
	m.sessMu.Lock()
	m.sessions[id] = s
	m.sessMu.Unlock()
	return s.c, nil
}

// errStale is a session key file older than publish_session.
var errStale = errors.New("session key expired")

// readSession reads a session key file that is younger than maxAge.
func readSession(path string, now time.Time, maxAge time.Duration) (session, error) {
	st, err := os.Stat(path)
	if err != nil {
		return session{}, err
	}
	if now.Sub(st.ModTime()) > maxAge {
		return session{}, errStale
	}
	ks, err := crypt.ReadKeyFile(path)
	if err != nil {
		return session{}, err
	}
	c, err := crypt.NewCrypticle(ks)
	if err != nil {
		return session{}, err
	}
	return session{mtime: st.ModTime(), c: c}, nil
}

// idLock returns the lock of id's stripe; work on one minion's files
// holds it so that two requests of the same minion do not interleave.
func (m *Master) idLock(id string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(id))
	return &m.idLocks[h.Sum32()%uint32(len(m.idLocks))]
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
	pub, err := transport.ListenPub(ctx, net.JoinHostPort(ip, strconv.Itoa(m.o.PublishPort)), transport.PubOptions{Log: m.log})
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
				if err := os.Remove(dfn); err != nil && !errors.Is(err, fs.ErrNotExist) {
					m.log.Warn("remove .dfn", logattr.Err, err)
				}
				m.forgetRemovedKeys()
				if m.o.RotateAESKey {
					m.rotateOrWarn("key removed")
					lastRotate = now
				}
			} else if !errors.Is(err, fs.ErrNotExist) {
				m.log.Warn("check .dfn", logattr.Err, err)
			}
			if m.o.PublishSession > 0 && now.Sub(lastRotate) > m.o.PublishSession {
				m.rotateOrWarn("publish_session")
				lastRotate = now
			}
			if now.Sub(lastClean) > time.Hour {
				lastClean = now
				if n, err := m.jobs.Clean(m.o.KeepJobs, now); err != nil {
					m.log.Warn("clean job cache", logattr.Err, err)
				} else if n > 0 {
					m.log.Info("cleaned job cache", "removed", n)
				}
			}
			m.pruneNonces(now)
			m.eauth.maintain(now)
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
