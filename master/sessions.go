package master

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/pki"
)

// session is one minion's session key and when its file was written.
type session struct {
	mtime time.Time
	c     *crypt.Crypticle
}

// sessionKeys caches the per-minion session keys read from or written to
// cachedir/sessions. idLocks are stripes by minion id (see lock), held
// while one minion's session file is written.
type sessionKeys struct {
	byID[session]
	idLocks [64]sync.Mutex
}

// lock returns the lock of id's stripe; work on one minion's files
// holds it so that two requests of the same minion do not interleave.
func (s *sessionKeys) lock(id string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(id))
	return &s.idLocks[h.Sum32()%uint32(len(s.idLocks))]
}

// sessionKey is ReqServerChannel.session_key: a per-minion key kept in
// cachedir/sessions/<id>, renewed after publish_session. Only the id's
// stripe lock is held while the file is written, so sign-ins of
// different minions do not wait on each other's disk writes; a file that
// is empty or damaged (a crash before it reached the disk) is replaced.
func (m *Master) sessionKey(id string) (*crypt.Crypticle, error) {
	now := time.Now()
	fresh := func() (*crypt.Crypticle, bool) {
		s, ok := m.sessions.get(id)
		return s.c, ok && now.Sub(s.mtime) < m.o.PublishSession
	}
	if c, ok := fresh(); ok {
		return c, nil
	}
	l := m.sessions.lock(id)
	l.Lock()
	defer l.Unlock()
	if c, ok := fresh(); ok {
		return c, nil // another sign-in of this minion made it meanwhile
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
	m.sessions.put(id, s)
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

// dropSession forgets a minion's session key (its key was removed).
func (m *Master) dropSession(id string) {
	m.sessions.drop(id)
	_ = os.Remove(filepath.Join(m.o.CacheDir, "sessions", id))
}

// minionKey is an accepted key as read from its file.
type minionKey struct {
	pem string
	key *rsa.PublicKey
}

// minionKeys caches the parsed accepted keys by minion id; mu guards
// byID. Its zero value is empty and ready.
type minionKeys struct {
	mu   sync.Mutex
	byID map[string]minionKey
}

// parsed returns the key parsed from pem, parsing it only when the
// cached one came from other file contents.
func (k *minionKeys) parsed(id string, pem []byte) (*rsa.PublicKey, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c, ok := k.byID[id]; ok && c.pem == string(pem) {
		return c.key, true
	}
	pub, err := crypt.ParsePublicKey(pem)
	if err != nil {
		return nil, false
	}
	if k.byID == nil {
		k.byID = map[string]minionKey{}
	}
	k.byID[id] = minionKey{pem: string(pem), key: pub}
	return pub, true
}

// forget drops the ids for which gone is true and returns them.
func (k *minionKeys) forget(gone func(id string) bool) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for id := range k.byID {
		if gone(id) {
			out = append(out, id)
			delete(k.byID, id)
		}
	}
	return out
}

// acceptedKey returns the minion's accepted public key, re-read when the
// file changes; ok is false when the minion is not accepted.
func (m *Master) acceptedKey(id string) (*rsa.PublicKey, bool) {
	data, err := os.ReadFile(m.pki.Path(pki.Accepted, id))
	if err != nil {
		return nil, false
	}
	return m.keys.parsed(id, data)
}
