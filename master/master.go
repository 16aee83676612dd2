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
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/reactor"
	"github.com/brinesalt/brine/internal/sdnotify"
	"github.com/brinesalt/brine/internal/transport"
)

// Master is a running salt-master.
type Master struct {
	o   Options
	log *slog.Logger
	pki *pki.Master
	key *rsa.PrivateKey
	pub string
	// pubSig is the auth replies' pub_sig (pubsign.go), "" when off.
	pubSig string
	jobs   *jobcache.Cache
	jc     jobCaches // master_job_cache, ext_job_cache, event_return (jobcaches.go)
	bus    *Bus
	eauth  *eauthState // external_auth, tokens, publisher ACLs (eauth.go)

	aes  aesKey
	pubs pubSequence // publication serials, sent in order (pubseq.go)

	sessions sessionKeys      // per-minion session keys (sessions.go)
	keys     minionKeys       // parsed accepted keys (sessions.go)
	seen     nonces           // request nonces, for replay refusal (req.go)
	authed   sync.Map         // id -> time of last accepted _auth
	data     byID[minionData] // minion data cache: grains, pillar (pillar.go)
	// selfReturns holds the ids that sent a _return of their own, which
	// tells a syndic that is also a minion from a relay (syndic.go).
	selfReturns sync.Map
	mineMu      sync.Mutex       // serialises read-modify-write of the mine banks on disk
	reactor     *reactor.Reactor // nil without a reactor map (reactor.go)
	// minionGrains are the master minion's grains for the reactor's
	// templates (masterminion.go).
	minionGrains MinionGrains

	pubSock   *transport.Publisher
	req       *transport.Router
	local     localServer // the local socket salt and salt-key talk to (local.go)
	wg        sync.WaitGroup
	stopMaint context.CancelFunc
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
	pass, err := crypt.KeyPass("key_pass", o.Raw.Value("key_pass"))
	if err != nil {
		return nil, fmt.Errorf("start master: %w", err)
	}
	key, pub, err := p.Keys(o.KeySize, pass)
	if err != nil {
		return nil, fmt.Errorf("start master: %w", err)
	}
	m := &Master{o: o, log: log, pki: p, key: key, pub: pub, jobs: jobcache.New(o.CacheDir), bus: NewBus()}
	p.Events = func(e pki.Event) { m.bus.Fire(e.Tag, e.Data) }
	if m.pubSig, err = pubSignature(o, pub); err != nil {
		return nil, fmt.Errorf("start master: %w", err)
	}
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
	m.aes.set(c, sig)
	m.log.Info("AES key rotated", "reason", why)
	return nil
}

// aesKey is the publish key (Salt's aes session key) with its
// signature, sent in every auth reply; rotateAES replaces both together.
type aesKey struct {
	mu  sync.RWMutex
	c   *crypt.Crypticle
	sig []byte // crypt.AESSignature of c
}

func (a *aesKey) set(c *crypt.Crypticle, sig []byte) {
	a.mu.Lock()
	a.c, a.sig = c, sig
	a.mu.Unlock()
}

// key returns the current publish key.
func (a *aesKey) key() *crypt.Crypticle {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.c
}

// keyAndSig returns the key with its signature, read together so a
// rotation cannot pair one key with the other's signature.
func (a *aesKey) keyAndSig() (*crypt.Crypticle, []byte) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.c, a.sig
}

// byID is a map by minion id with the lock that guards it, for the
// master's in-memory caches; its zero value is empty and ready.
type byID[V any] struct {
	mu sync.RWMutex
	m  map[string]V
}

func (c *byID[V]) get(id string) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[id]
	return v, ok
}

func (c *byID[V]) put(id string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]V{}
	}
	c.m[id] = v
}

func (c *byID[V]) drop(id string) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

// Run binds the sockets and serves until ctx ends.
func (m *Master) Run(ctx context.Context) error {
	if err := m.Start(ctx); err != nil {
		return err
	}
	// Ready once the sockets are bound, for Type=notify units.
	if err := sdnotify.Ready(); err != nil {
		m.log.Warn(err.Error())
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
	if err := m.startJobCaches(ctx); err != nil {
		pub.Close()
		req.Close()
		m.stopJobCaches()
		return fmt.Errorf("start master: %w", err)
	}
	if err := m.listenLocal(ctx); err != nil {
		pub.Close()
		req.Close()
		m.stopJobCaches()
		return fmt.Errorf("start master: %w", err)
	}
	mctx, cancel := context.WithCancel(ctx)
	m.stopMaint = cancel
	m.wg.Add(1)
	go m.maintenance(mctx)
	m.startSchedule(mctx)

	m.startReactor(mctx)
	m.log.Info("master started", "publish", pub.Addr().String(), "ret", req.Addr().String())
	return nil
}

// Stop closes the sockets and waits for the master's goroutines.
func (m *Master) Stop() {
	if m.stopMaint != nil {
		m.stopMaint()
	}
	m.local.close()
	if m.req != nil {
		m.req.Close()
	}
	if m.pubSock != nil {
		m.pubSock.Close()
	}
	m.wg.Wait()
	m.stopJobCaches()
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
			if now.Sub(lastClean) > m.cleanInterval() {
				lastClean = now
				m.cleanJobs(ctx)
			}
			m.seen.prune(now)
			m.eauth.maintain(now)
		}
	}
}

// forgetRemovedKeys drops the cached key, session and sign-in of every
// minion whose accepted key file is gone.
func (m *Master) forgetRemovedKeys() {
	gone := m.keys.forget(func(id string) bool {
		_, err := os.Stat(m.pki.Path(pki.Accepted, id))
		return err != nil
	})
	for _, id := range gone {
		m.dropSession(id)
		m.authed.Delete(id)
	}
}
