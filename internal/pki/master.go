package pki

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/target"
)

// Key states, named by their directories under pki_dir (salt/key.py Key).
const (
	Accepted = "minions"
	Pending  = "minions_pre"
	Rejected = "minions_rejected"
	Denied   = "minions_denied"
	// Local names the master's own .pem/.pub files in listings.
	Local = "local"
	// AutosignDir holds stub files that accept a minion once.
	AutosignDir = "minions_autosign"
)

// States lists the key states in Salt's order.
var States = []string{Accepted, Pending, Rejected, Denied}

// ErrInvalidID is a minion id Salt refuses (salt.utils.verify.valid_id).
var ErrInvalidID = errors.New("invalid minion id")

// Event is a key event for the master bus: tag salt/key or salt/auth.
type Event struct {
	Tag  string
	Data *ordered.Map
}

// Master is a master's pki_dir.
type Master struct {
	// Dir is pki_dir.
	Dir string
	// CacheDir is the master cachedir, where key changes clear
	// minions/<id> caches and rotate_aes_key drops .dfn.
	CacheDir string
	// RotateAESKey asks the master to rotate its AES key when keys are
	// rejected or deleted (rotate_aes_key, default true).
	RotateAESKey bool
	// PreserveMinionCache keeps caches of deleted minions.
	PreserveMinionCache bool
	// PreserveMinions keeps the caches of the accepted keys a Delete
	// removes (salt-key --preserve-minions).
	PreserveMinions bool
	// Events receives salt/key events; nil drops them.
	Events func(Event)

	// mu orders key changes: salt-key actions hold it exclusively,
	// sign-ins share it and hold their id's stripe of idLocks, so
	// sign-ins of different minions run in parallel.
	mu      sync.RWMutex
	idLocks [64]sync.Mutex
	// sigMu guards signing, the parsed autosign/autoreject files by
	// mtime.
	sigMu   sync.Mutex
	signing map[string]signingFile
	// dirs is the index of key directory listings (see listDir).
	dirs dirIndex
}

// NewMaster returns the pki_dir at dir.
func NewMaster(dir string) *Master {
	return &Master{Dir: dir, RotateAESKey: true, signing: map[string]signingFile{}}
}

// lockID takes the shared key lock and id's stripe; the returned
// function releases both.
func (m *Master) lockID(id string) func() {
	h := fnv.New32a()
	h.Write([]byte(id))
	l := &m.idLocks[h.Sum32()%uint32(len(m.idLocks))]
	m.mu.RLock()
	l.Lock()
	return func() { l.Unlock(); m.mu.RUnlock() }
}

// Init creates pki_dir and its key directories with mode 0700, as the
// master's verify_env does, and master.pem/.pub when missing.
func (m *Master) Init(keySize int) error {
	for _, d := range append([]string{""}, Accepted, Pending, Rejected, Denied, AutosignDir) {
		if err := os.MkdirAll(filepath.Join(m.Dir, d), 0o700); err != nil {
			return fmt.Errorf("init pki dir: %w", err)
		}
	}
	return nil
}

// Keys loads master.pem, generating the pair first when missing
// (encrypted with passphrase, the master's key_pass, when it is not
// empty), and returns it with master.pub cleaned as the _auth reply's
// pub_key (salt/crypt.py MasterKeys: __get_keys and get_pub_str, which
// rewrites a missing master.pub from the private key). An error names
// the file, never the passphrase.
func (m *Master) Keys(keySize int, passphrase string) (*rsa.PrivateKey, string, error) {
	priv := filepath.Join(m.Dir, "master.pem")
	if _, err := os.Stat(priv); errors.Is(err, fs.ErrNotExist) {
		if _, err := crypt.GenKeysPass(m.Dir, "master", keySize, passphrase); err != nil {
			return nil, "", fmt.Errorf("master keys: %w", err)
		}
	}
	k, err := crypt.LoadPrivateKey(priv, passphrase)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil, "", fmt.Errorf("master keys: %w", err)
	}
	if err != nil {
		return nil, "", fmt.Errorf("unable to read key: %s; passphrase may be incorrect (key_pass): %w", priv, err)
	}
	pubPath := filepath.Join(m.Dir, "master.pub")
	pub, err := os.ReadFile(pubPath)
	if errors.Is(err, fs.ErrNotExist) {
		pub = crypt.EncodePublicKey(&k.PublicKey)
		err = crypt.WriteFileAtomic(pubPath, pub, crypt.PublicKeyPerm)
	}
	if err != nil {
		return nil, "", fmt.Errorf("master keys: %w", err)
	}
	return k, crypt.CleanKey(string(pub)), nil
}

// ValidID reports whether id may name a key file: no "/", "\" or NUL,
// and it must resolve to a direct child of pki_dir (so not "", "." or
// "..").
func ValidID(pkiDir, id string) bool {
	if id == "" || strings.ContainsAny(id, "/\\\x00") {
		return false
	}
	root := filepath.Clean(pkiDir)
	return filepath.Dir(filepath.Join(root, id)) == root
}

// Path returns the file of id in state.
func (m *Master) Path(state, id string) string { return filepath.Join(m.Dir, state, id) }

// Group is the keys in one state.
type Group struct {
	State string
	Keys  []string
}

// Listing is keys grouped by state, in Salt's order.
type Listing []Group

// Get returns the keys in state.
func (l Listing) Get(state string) []string {
	for _, g := range l {
		if g.State == state {
			return g.Keys
		}
	}
	return nil
}

// Has reports whether state is present (possibly empty).
func (l Listing) Has(state string) bool {
	for _, g := range l {
		if g.State == state {
			return true
		}
	}
	return false
}

// add appends id to state, creating the group at the end.
func (l Listing) add(state, id string) Listing {
	for i := range l {
		if l[i].State == state {
			l[i].Keys = append(l[i].Keys, id)
			return l
		}
	}
	return append(l, Group{State: state, Keys: []string{id}})
}

// Map returns the listing as Salt's dict of lists, for outputters.
func (l Listing) Map() *ordered.Map {
	out := ordered.New()
	for _, g := range l {
		keys := make([]any, len(g.Keys))
		for i, k := range g.Keys {
			keys[i] = k
		}
		out.Set(g.State, keys)
	}
	return out
}

// sortedIgnoreCase is salt.utils.data.sorted_ignorecase: a stable sort on
// the lowercased names.
func sortedIgnoreCase(names []string) []string {
	lower := make(map[string]string, len(names))
	for _, n := range names {
		lower[n] = strings.ToLower(n)
	}
	sort.SliceStable(names, func(i, j int) bool { return lower[names[i]] < lower[names[j]] })
	return names
}

// listDir returns the regular files of dir not starting with ".", sorted
// ignoring case; ok is false when dir cannot be read. Listings come from
// the index while the directory's mtime is unchanged.
func (m *Master) listDir(dir string) ([]string, bool) { return m.dirs.list(dir) }

// ListKeys is Key.list_keys: every state, empty when its directory is
// missing.
func (m *Master) ListKeys() Listing {
	out := Listing{}
	for _, s := range States {
		names, _ := m.listDir(filepath.Join(m.Dir, s))
		if names == nil {
			names = []string{}
		}
		out = append(out, Group{State: s, Keys: names})
	}
	return out
}

// LocalKeys is Key.local_keys: the .pub and .pem files in pki_dir.
func (m *Master) LocalKeys() Group {
	names, _ := m.listDir(m.Dir)
	g := Group{State: Local, Keys: []string{}}
	for _, n := range names {
		if strings.HasSuffix(n, ".pub") || strings.HasSuffix(n, ".pem") {
			g.Keys = append(g.Keys, n)
		}
	}
	return g
}

// AllKeys is Key.all_keys: the managed keys and the local ones.
func (m *Master) AllKeys() Listing { return append(m.ListKeys(), m.LocalKeys()) }

// ListStatus is Key.list_status: the keys of the state named by match's
// prefix (acc, pre or un, rej, den), or all keys for "all". Another word
// yields an empty listing; a missing directory is an error, as
// os.listdir raises in Salt.
func (m *Master) ListStatus(match string) (Listing, error) {
	var state string
	switch {
	case strings.HasPrefix(match, "acc"):
		state = Accepted
	case strings.HasPrefix(match, "pre"), strings.HasPrefix(match, "un"):
		state = Pending
	case strings.HasPrefix(match, "rej"):
		state = Rejected
	case strings.HasPrefix(match, "den"):
		state = Denied
	case strings.HasPrefix(match, "all"):
		return m.AllKeys(), nil
	default:
		return Listing{}, nil
	}
	names, ok := m.listDir(filepath.Join(m.Dir, state))
	if !ok {
		return nil, fmt.Errorf("list %s keys: cannot read %s", state, filepath.Join(m.Dir, state))
	}
	return Listing{{State: state, Keys: names}}, nil
}

// globMatch is fnmatch.fnmatch(name, pat); a pattern CPython cannot
// compile matches nothing.
func globMatch(pat, name string) bool {
	ok, err := target.MatchID(pat, target.Glob, name, target.Options{})
	return err == nil && ok
}

// NameMatch is Key.name_match: the keys matching a glob, or any of a
// comma-separated list of globs, by state; full includes local keys. As
// in Salt, a key matching several globs of a list is listed once per
// glob.
func (m *Master) NameMatch(match string, full bool) Listing {
	all := m.ListKeys()
	if full {
		all = m.AllKeys()
	}
	pats := []string{match}
	if strings.Contains(match, ",") {
		pats = strings.Split(match, ",")
	}
	out := Listing{}
	for _, g := range all {
		for _, key := range sortedIgnoreCase(append([]string(nil), g.Keys...)) {
			for _, p := range pats {
				if globMatch(p, key) {
					out = out.add(g.State, key)
				}
			}
		}
	}
	return out
}

// DictMatch is Key.dict_match: the current states of the keys named in
// match (each name used as a glob over every state).
func (m *Master) DictMatch(match Listing) Listing {
	cur := m.ListKeys()
	out := Listing{}
	for _, g := range match {
		for _, key := range sortedIgnoreCase(append([]string(nil), g.Keys...)) {
			for _, s := range States {
				for _, have := range cur.Get(s) {
					if globMatch(key, have) {
						out = out.add(s, key)
						break
					}
				}
			}
		}
	}
	return out
}
