package sshconn

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/logattr"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// hostKeys checks one host's key against the user's known_hosts file and
// the global ones; new keys are recorded in the user's file only.
type hostKeys struct {
	mode   HostKeyMode
	hash   bool
	file   string
	global []string
	addr   string // host:port as dialled
	log    *slog.Logger
	db     ssh.HostKeyCallback // nil when the file does not exist
	algos  []string            // preferred host key algorithms
	// caLines are the "file:line" of @cert-authority entries: x/crypto's
	// knownhosts reports their keys as wanted for plain host keys too,
	// which would turn "not known" into a false mismatch.
	caLines map[string]bool
}

// newHostKeys reads the known_hosts file once for this dial.
func newHostKeys(cfg *Config) (*hostKeys, error) {
	h := &hostKeys{mode: cfg.HostKey, hash: cfg.HashKnownHosts, addr: cfg.addr(), log: cfg.logger()}
	if h.mode == HostKeyIgnore {
		return h, nil
	}
	file, err := cfg.knownHostsFile()
	if err != nil {
		return nil, err
	}
	h.file, h.global = file, cfg.globalKnownHosts()
	if h.db, h.caLines, err = parsedKnownHosts(h.files()); err != nil {
		return nil, err
	}
	known, ca := h.knownKeys()
	h.algos = hostKeyAlgorithms(known, ca)
	return h, nil
}

// parsed caches the known_hosts databases of this process, keyed by the
// files' names, sizes and modification times: a run over a hundred hosts
// parses the file once instead of once per host, and a key recorded by
// -i (which changes the file) makes the next dial parse it again.
var parsed struct {
	sync.Mutex
	key string
	db  ssh.HostKeyCallback
	ca  map[string]bool
}

func parsedKnownHosts(files []string) (ssh.HostKeyCallback, map[string]bool, error) {
	var key strings.Builder
	for _, f := range files {
		key.WriteString(f)
		if st, err := os.Stat(f); err == nil {
			fmt.Fprintf(&key, "|%d|%d", st.Size(), st.ModTime().UnixNano())
		}
		key.WriteByte(0)
	}
	parsed.Lock()
	defer parsed.Unlock()
	if parsed.key == key.String() && parsed.ca != nil {
		return parsed.db, parsed.ca, nil
	}
	db, err := loadKnownHosts(files...)
	if err != nil {
		return nil, nil, err
	}
	parsed.key, parsed.db, parsed.ca = key.String(), db, certAuthorityLines(files)
	return db, parsed.ca, nil
}

// certAuthorityLines finds the @cert-authority lines of files.
func certAuthorityLines(files []string) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "@cert-authority") {
				out[f+":"+strconv.Itoa(i+1)] = true
			}
		}
	}
	return out
}

// plainWant drops @cert-authority entries from what knownhosts wants.
func (h *hostKeys) plainWant(want []knownhosts.KnownKey) (plain []knownhosts.KnownKey, ca bool) {
	for _, k := range want {
		if h.caLines[k.Filename+":"+strconv.Itoa(k.Line)] {
			ca = true
			continue
		}
		plain = append(plain, k)
	}
	return plain, ca
}

// files are the user file and the global files, in lookup order.
func (h *hostKeys) files() []string { return append([]string{h.file}, h.global...) }

// loadKnownHosts parses files into one database (hashed entries,
// @cert-authority and @revoked lines included); missing files are
// skipped, and no file at all is an empty (nil) database.
func loadKnownHosts(files ...string) (ssh.HostKeyCallback, error) {
	var present []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			present = append(present, f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read known_hosts: %w", err)
		}
	}
	if len(present) == 0 {
		return nil, nil
	}
	if db, ok := indexKnownHosts(present); ok {
		return db, nil
	}
	db, err := knownhosts.New(present...)
	if err != nil {
		return nil, fmt.Errorf("read known_hosts: %w", err)
	}
	return db, nil
}

// probeKey matches no real host key; checking it yields the known keys.
var probeKey, _ = ssh.NewPublicKey(ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)))

var probeRemote = &net.TCPAddr{IP: net.IPv4zero}

// knownKeys lists the plain keys known_hosts holds for the address, and
// whether a @cert-authority line covers it.
func (h *hostKeys) knownKeys() ([]knownhosts.KnownKey, bool) {
	if h.db == nil {
		return nil, false
	}
	var ke *knownhosts.KeyError
	if errors.As(h.db(h.addr, probeRemote, probeKey), &ke) {
		return h.plainWant(ke.Want)
	}
	return nil, false
}

// hostKeyAlgorithms puts the algorithms of already-known keys first, so a
// server holding both an RSA and an ed25519 key presents the one we know
// (as OpenSSH orders HostKeyAlgorithms from known_hosts); certificate
// algorithms go first when a @cert-authority line covers the host.
func hostKeyAlgorithms(known []knownhosts.KnownKey, ca bool) []string {
	if len(known) == 0 && !ca {
		return nil
	}
	var first []string
	if ca {
		for _, a := range ssh.SupportedAlgorithms().HostKeys {
			if strings.Contains(a, "-cert-") {
				first = append(first, a)
			}
		}
	}
	for _, k := range known {
		for _, a := range algorithmsForKeyType(k.Key.Type()) {
			if !slices.Contains(first, a) {
				first = append(first, a)
			}
		}
	}
	out := first
	for _, a := range ssh.SupportedAlgorithms().HostKeys {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func algorithmsForKeyType(t string) []string {
	if t == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{t}
}

// callback is the ssh.HostKeyCallback for this dial.
func (h *hostKeys) callback(_ string, remote net.Addr, key ssh.PublicKey) error {
	if h.mode == HostKeyIgnore {
		return nil
	}
	err := h.check(h.db, remote, key)
	if cert, ok := key.(*ssh.Certificate); ok && err != nil && !errors.Is(err, ErrHostKeyMismatch) {
		// No @cert-authority vouches for it: judge the certified key by
		// itself, as OpenSSH falls back to the plain host key.
		h.log.Debug("host certificate not trusted; checking its key", LogKeyHost, knownhosts.Normalize(h.addr), logattr.Err, err)
		key = cert.Key
		err = h.check(h.db, remote, key)
	}
	if !errors.Is(err, ErrHostKeyUnknown) || h.mode != HostKeyAcceptNew {
		return err
	}
	return h.record(remote, key)
}

// check classifies key against db (nil db: nothing known).
func (h *hostKeys) check(db ssh.HostKeyCallback, remote net.Addr, key ssh.PublicKey) error {
	hkErr := &HostKeyError{Host: knownhosts.Normalize(h.addr), Key: key, KnownHostsFile: h.file}
	if db == nil {
		hkErr.Err = ErrHostKeyUnknown
		return hkErr
	}
	err := db(h.addr, remote, key)
	var ke *knownhosts.KeyError
	var re *knownhosts.RevokedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		hkErr.Err, hkErr.Revoked, hkErr.Line = ErrHostKeyMismatch, true, re.Revoked.Line
	case errors.As(err, &ke):
		want, _ := h.plainWant(ke.Want)
		if len(want) == 0 {
			hkErr.Err = ErrHostKeyUnknown
			break
		}
		hkErr.Err, hkErr.Line = ErrHostKeyMismatch, want[0].Line
		if want[0].Filename != h.file {
			hkErr.KnownHostsFile = want[0].Filename
		}
	default:
		return fmt.Errorf("check host key: %w", err)
	}
	return hkErr
}

// record appends the key under both locks, re-reading the file first so a
// key recorded meanwhile by another goroutine or process is honoured
// instead of duplicated (or silently contradicted).
func (h *hostKeys) record(remote net.Addr, key ssh.PublicKey) error {
	mu := fileMutex(h.file)
	mu.Lock()
	defer mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(h.file), 0o700); err != nil {
		return fmt.Errorf("record host key: %w", err)
	}
	f, err := os.OpenFile(h.file, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("record host key: %w", err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return fmt.Errorf("record host key: lock %s: %w", h.file, err)
	}
	defer unlockFile(f)

	db, err := loadKnownHosts(h.files()...)
	if err != nil {
		return err
	}
	if err := h.check(db, remote, key); !errors.Is(err, ErrHostKeyUnknown) {
		return err
	}
	line := knownhosts.Line([]string{h.addr}, key) + "\n"
	if h.hash {
		line = knownhosts.HashHostname(knownhosts.Normalize(h.addr)) + " " +
			strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))) + "\n"
	}
	if !endsWithNewline(f) {
		line = "\n" + line
	}
	// One write on an O_APPEND descriptor: the line lands whole at the end.
	if _, err := f.WriteString(line); err != nil {
		return fmt.Errorf("record host key: %w", err)
	}
	h.log.Warn("permanently added host key to known_hosts",
		LogKeyHost, knownhosts.Normalize(h.addr), "key_type", key.Type(),
		"fingerprint", ssh.FingerprintSHA256(key), "file", h.file)
	return nil
}

// endsWithNewline reports whether f is empty or ends with a newline, so
// an appended line never joins a hand-edited last line.
func endsWithNewline(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return true
	}
	var last [1]byte
	_, err = f.ReadAt(last[:], st.Size()-1)
	return err == nil && last[0] == '\n'
}

// fileLocks serialises known_hosts writers within this process, one mutex
// per cleaned path; flock covers other processes.
var fileLocks sync.Map

func fileMutex(path string) *sync.Mutex {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	mu, _ := fileLocks.LoadOrStore(path, new(sync.Mutex))
	return mu.(*sync.Mutex)
}
