package pki

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

func (m *Master) fire(act, id string) {
	if m.Events == nil {
		return
	}
	m.Events(Event{Tag: protocol.KeyTag(), Data: ordered.FromPairs("result", true, "act", act, "id", id)})
}

// move renames a key between states; os.Rename is atomic within pki_dir.
func (m *Master) move(from, to, id string) error {
	if err := os.Rename(m.Path(from, id), m.Path(to, id)); err != nil {
		return fmt.Errorf("move key %s from %s to %s: %w", id, from, to, err)
	}
	return nil
}

// InvalidKeyError names a key that could not be accepted because its file
// is not an RSA public key (Salt: "Unable to accept invalid key for <id>.").
type InvalidKeyError struct {
	State, ID string
}

func (e *InvalidKeyError) Error() string {
	return fmt.Sprintf("Unable to accept invalid key for %s.", e.ID)
}

// Accept is Key.accept with a pre-gathered match: keys in minions_pre
// (and minions_rejected / minions_denied when included) that hold a valid
// RSA public key move to minions; invalid ones are reported and left.
// It returns the matched keys' new states (dict_match).
func (m *Master) Accept(match Listing, includeRejected, includeDenied bool) (Listing, []error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dirs := []string{Pending}
	if includeRejected {
		dirs = append(dirs, Rejected)
	}
	if includeDenied {
		dirs = append(dirs, Denied)
	}
	var errs []error
	remaining := Listing{}
	for _, g := range match {
		remaining = append(remaining, Group{State: g.State, Keys: append([]string(nil), g.Keys...)})
	}
	for _, d := range dirs {
		for _, id := range match.Get(d) {
			if _, err := crypt.LoadPublicKey(m.Path(d, id)); errors.Is(err, crypt.ErrInvalidKey) {
				errs = append(errs, &InvalidKeyError{State: d, ID: id})
				remaining = remaining.remove(d, id)
				continue
			}
			if m.move(d, Accepted, id) == nil {
				m.fire("accept", id)
			}
		}
	}
	return m.DictMatch(remaining), errs
}

func (l Listing) remove(state, id string) Listing {
	for i := range l {
		if l[i].State != state {
			continue
		}
		for j, k := range l[i].Keys {
			if k == id {
				l[i].Keys = append(l[i].Keys[:j:j], l[i].Keys[j+1:]...)
				return l
			}
		}
	}
	return l
}

// AcceptAll is Key.accept_all: every pending key moves to minions.
func (m *Master) AcceptAll() Listing {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range m.ListKeys().Get(Pending) {
		if m.move(Pending, Accepted, id) == nil {
			m.fire("accept", id)
		}
	}
	return m.ListKeys()
}

// Reject is Key.reject with a pre-gathered match: keys in minions_pre
// (and minions / minions_denied when included) move to minions_rejected.
func (m *Master) Reject(match Listing, includeAccepted, includeDenied bool) Listing {
	m.mu.Lock()
	defer m.mu.Unlock()
	dirs := []string{Pending}
	if includeAccepted {
		dirs = append(dirs, Accepted)
	}
	if includeDenied {
		dirs = append(dirs, Denied)
	}
	for _, d := range dirs {
		for _, id := range match.Get(d) {
			if m.move(d, Rejected, id) == nil {
				m.fire("reject", id)
			}
		}
	}
	m.afterRemoval(nil)
	return m.DictMatch(match)
}

// RejectAll is Key.reject_all.
func (m *Master) RejectAll() Listing {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range m.ListKeys().Get(Pending) {
		if m.move(Pending, Rejected, id) == nil {
			m.fire("reject", id)
		}
	}
	m.afterRemoval(nil)
	return m.ListKeys()
}

// Delete is Key.delete_key with a pre-gathered match: the named key files
// are removed from their states.
func (m *Master) Delete(match Listing) Listing {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, g := range match {
		for _, id := range g.Keys {
			if os.Remove(m.Path(g.State, id)) == nil {
				m.fire("delete", id)
			}
		}
	}
	var preserve []string
	if m.PreserveMinions {
		preserve = match.Get(Accepted)
	}
	m.afterRemoval(preserve)
	return m.DictMatch(match)
}

// DeleteAll is Key.delete_all: every managed key is removed.
func (m *Master) DeleteAll() Listing {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, g := range m.ListKeys() {
		for _, id := range g.Keys {
			if os.Remove(m.Path(g.State, id)) == nil {
				m.fire("delete", id)
			}
		}
	}
	m.afterRemoval(nil)
	return m.ListKeys()
}

// DeleteDenied is Key.delete_den: every denied key is removed.
func (m *Master) DeleteDenied() Listing {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range m.ListKeys().Get(Denied) {
		if os.Remove(m.Path(Denied, id)) == nil {
			m.fire("delete", id)
		}
	}
	m.checkMinionCache(nil)
	return m.ListKeys()
}

// afterRemoval clears stale minion caches and, with rotate_aes_key,
// leaves the .dfn file that tells the master to rotate its AES key
// (salt.crypt.dropfile).
func (m *Master) afterRemoval(preserve []string) {
	m.checkMinionCache(preserve)
	if !m.RotateAESKey || m.CacheDir == "" {
		return
	}
	dfn := filepath.Join(m.CacheDir, ".dfn")
	if _, err := os.Stat(dfn); err == nil {
		return
	}
	_ = crypt.WriteFileAtomic(dfn, nil, 0o400)
}

// checkMinionCache removes cachedir/minions/<id> for ids that no longer
// have a key (Key.check_minion_cache), unless preserve_minion_cache.
func (m *Master) checkMinionCache(preserve []string) {
	if m.PreserveMinionCache || m.CacheDir == "" {
		return
	}
	known := map[string]bool{}
	for _, g := range m.ListKeys() {
		for _, k := range g.Keys {
			known[k] = true
		}
	}
	for _, k := range preserve {
		known[k] = true
	}
	dir := filepath.Join(m.CacheDir, Accepted)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !known[e.Name()] {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// keyFile is the path of a listed key; local keys live in pki_dir itself.
func (m *Master) keyFile(state, id string) string {
	if state == Local {
		return filepath.Join(m.Dir, id)
	}
	return m.Path(state, id)
}

// Finger is Key.finger: fingerprints of the keys matching a glob,
// including local keys.
func (m *Master) Finger(match, hashType string) (*ordered.Map, error) {
	return m.fingers(m.NameMatch(match, true), hashType)
}

// FingerAll is Key.finger_all.
func (m *Master) FingerAll(hashType string) (*ordered.Map, error) {
	return m.fingers(m.AllKeys(), hashType)
}

func (m *Master) fingers(l Listing, hashType string) (*ordered.Map, error) {
	out := ordered.New()
	for _, g := range l {
		fm := ordered.New()
		for _, id := range g.Keys {
			f, err := crypt.PemFinger(m.keyFile(g.State, id), hashType)
			if err != nil {
				return nil, err
			}
			fm.Set(id, f)
		}
		out.Set(g.State, fm)
	}
	return out, nil
}

// KeyStr is Key.key_str: the public keys matching a glob, by state.
func (m *Master) KeyStr(match string) (*ordered.Map, error) {
	return m.keyStrs(m.NameMatch(match, false))
}

// KeyStrAll is Key.key_str_all.
func (m *Master) KeyStrAll() (*ordered.Map, error) { return m.keyStrs(m.ListKeys()) }

func (m *Master) keyStrs(l Listing) (*ordered.Map, error) {
	out := ordered.New()
	for _, g := range l {
		km := ordered.New()
		for _, id := range sortedIgnoreCase(append([]string(nil), g.Keys...)) {
			data, err := os.ReadFile(m.Path(g.State, id))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("read key %s: %w", id, err)
			}
			km.Set(id, string(data))
		}
		out.Set(g.State, km)
	}
	return out, nil
}
