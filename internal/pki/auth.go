package pki

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/target"
)

// AuthOptions are the master options that decide key acceptance.
type AuthOptions struct {
	OpenMode            bool
	AutoAccept          bool
	AutosignFile        string
	AutorejectFile      string
	AutosignGrainsDir   string
	AutosignTimeout     time.Duration // autosign_timeout, default 120 minutes
	PermissivePKIAccess bool
	// MaxMinions is max_minions (0: unlimited); Connected lists the ids
	// the master sees connected (CkMinions.connected_ids).
	MaxMinions int
	Connected  []string
}

// AuthOutcome is the master's decision on an _auth request.
type AuthOutcome struct {
	// Accepted means the key is in minions/ and the reply carries the
	// AES key; the other fields are then Ret true and Act "accept".
	Accepted bool
	// Ret is the refusal's "ret": false (rejected, denied, invalid) or
	// true (pending).
	Ret bool
	// Full means the reply's ret is "full" (max_minions reached).
	Full bool
	// Act is the salt/auth event's act: accept, pend, reject, denied, or
	// "" for a refusal without one.
	Act string
	// Event is the salt/auth event data (result, [act], id, pub).
	Event *ordered.Map
}

func outcome(accepted, ret bool, act, id, pub string) *AuthOutcome {
	ev := ordered.FromPairs("result", ret)
	if act != "" {
		ev.Set("act", act)
	}
	ev.Set("id", id)
	ev.Set("pub", pub)
	return &AuthOutcome{Accepted: accepted, Ret: ret, Act: act, Event: ev}
}

// Authorize applies ReqServerChannel._auth's key checks to a minion's id
// and public key, moving and writing key files as Salt does:
//
//   - open_mode accepts any key, overwriting minions/<id>;
//   - a key in minions_rejected is refused;
//   - an accepted key that differs is written to minions_denied and refused;
//   - a new key goes to minions_rejected (autoreject_file), minions_pre
//     (pending, ret true), or is accepted (auto_accept, autosign_file,
//     minions_autosign stub, autosign_grains_dir);
//   - a pending key that differs is denied; a pending key is rejected by
//     autoreject or accepted by autosign.
//
// Before that, with max_minions set, a minion that is not connected is
// refused with ret "full" once more than max_minions are connected.
func (m *Master) Authorize(id, pub string, grains *ordered.Map, o AuthOptions) (*AuthOutcome, error) {
	if !ValidID(m.Dir, id) {
		return outcome(false, false, "", id, pub), fmt.Errorf("authorize %q: %w", id, ErrInvalidID)
	}
	if o.MaxMinions > 0 && len(o.Connected) > o.MaxMinions && !slices.Contains(o.Connected, id) {
		out := outcome(false, false, "full", id, pub)
		out.Full = true
		return out, nil
	}
	defer m.lockID(id)()
	autoReject := m.checkSigningFile(id, o.AutorejectFile, o)
	autoSign := m.checkAutosign(id, grains, o)
	acc, pend := m.Path(Accepted, id), m.Path(Pending, id)
	rej := m.Path(Rejected, id)
	switch {
	case o.OpenMode:
	case isFile(rej):
		return outcome(false, false, "", id, pub), nil
	case isFile(acc):
		if !sameKey(acc, pub) {
			return m.deny(id, pub, true)
		}
	case !isFile(pend):
		if isDir(pend) {
			return outcome(false, false, "", id, pub), nil
		}
		switch {
		case autoReject:
			return m.place(rej, false, "reject", id, pub)
		case !autoSign:
			return m.place(pend, true, "pend", id, pub)
		}
	default: // pending
		switch {
		case autoReject:
			_ = os.Rename(pend, rej)
			return outcome(false, false, "reject", id, pub), nil
		case !autoSign:
			if !sameKey(pend, pub) {
				return m.deny(id, pub, true)
			}
			return outcome(false, true, "pend", id, pub), nil
		default:
			if !sameKey(pend, pub) {
				return m.deny(id, pub, false)
			}
			if err := os.Remove(pend); err != nil {
				return nil, fmt.Errorf("authorize %s: %w", id, err)
			}
		}
	}
	return m.acceptAuth(id, pub, o)
}

func (m *Master) acceptAuth(id, pub string, o AuthOptions) (*AuthOutcome, error) {
	acc := m.Path(Accepted, id)
	switch {
	case !o.OpenMode && !isFile(acc):
		if err := crypt.WriteFileAtomic(acc, []byte(pub), 0o644); err != nil {
			return nil, fmt.Errorf("authorize %s: %w", id, err)
		}
	case o.OpenMode:
		if pub == "" {
			return outcome(false, false, "", id, pub), nil
		}
		if disk, _ := os.ReadFile(acc); string(disk) != pub {
			if err := crypt.WriteFileAtomic(acc, []byte(pub), 0o644); err != nil {
				return nil, fmt.Errorf("authorize %s: %w", id, err)
			}
		}
	}
	if _, err := crypt.LoadPublicKey(acc); err != nil {
		// A corrupt key is refused without an act, as Salt does.
		return outcome(false, false, "", id, pub), nil
	}
	return outcome(true, true, "accept", id, pub), nil
}

// deny writes the offered key to minions_denied; withAct is false for the
// autosign branch, whose event Salt sends without "act".
func (m *Master) deny(id, pub string, withAct bool) (*AuthOutcome, error) {
	if err := crypt.WriteFileAtomic(m.Path(Denied, id), []byte(pub), 0o644); err != nil {
		return nil, fmt.Errorf("deny %s: %w", id, err)
	}
	act := "denied"
	if !withAct {
		act = ""
	}
	return outcome(false, false, act, id, pub), nil
}

func (m *Master) place(path string, ret bool, act, id, pub string) (*AuthOutcome, error) {
	if err := crypt.WriteFileAtomic(path, []byte(pub), 0o644); err != nil {
		return nil, fmt.Errorf("authorize %s: %w", id, err)
	}
	return outcome(false, ret, act, id, pub), nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// sameKey is ReqServerChannel.compare_keys against a key file.
func sameKey(path, pub string) bool {
	data, err := os.ReadFile(path)
	return err == nil && crypt.CleanKey(string(data)) == crypt.CleanKey(pub)
}

// checkAutosign is AutoKey.check_autosign.
func (m *Master) checkAutosign(id string, grains *ordered.Map, o AuthOptions) bool {
	return o.AutoAccept || m.checkSigningFile(id, o.AutosignFile, o) ||
		m.checkAutosignDir(id, o) || m.checkAutosignGrains(grains, o)
}

type signingFile struct {
	mtime time.Time
	lines []string
}

// checkSigningFile is AutoKey.check_signing_file: the file's non-comment
// lines are matched with expr_match (fnmatch, then a full-match regex).
// Files writable by others, or by the group without
// permissive_pki_access, are ignored.
func (m *Master) checkSigningFile(id, file string, o AuthOptions) bool {
	if file == "" {
		return false
	}
	st, err := os.Stat(file)
	if err != nil || !permsOK(st, o) {
		return false
	}
	m.sigMu.Lock()
	defer m.sigMu.Unlock()
	sf, ok := m.signing[file]
	if !ok || !sf.mtime.Equal(st.ModTime()) {
		data, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		sf = signingFile{mtime: st.ModTime()}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if !strings.HasPrefix(line, "#") {
				sf.lines = append(sf.lines, line)
			}
		}
		if m.signing == nil {
			m.signing = map[string]signingFile{}
		}
		m.signing[file] = sf
	}
	for _, line := range sf.lines {
		if ExprMatch(id, line) {
			return true
		}
	}
	return false
}

// ExprMatch is salt.utils.stringutils.expr_match: expr as an fnmatch glob,
// else as a regular expression that must match all of line.
func ExprMatch(line, expr string) bool {
	if ok, err := target.MatchID(expr, target.Glob, line, target.Options{}); err == nil && ok {
		return true
	}
	ok, err := target.MatchID(`\A`+expr+`\Z`, target.PCRE, line, target.Options{})
	return err == nil && ok
}

// permsOK is AutoKey.check_permissions (without the group-membership
// refinement for root).
func permsOK(st fs.FileInfo, o AuthOptions) bool {
	mode := st.Mode().Perm()
	if mode&0o002 != 0 {
		return false
	}
	if mode&0o020 != 0 && !o.PermissivePKIAccess {
		return false
	}
	return true
}

// checkAutosignDir is AutoKey.check_autosign_dir: expired stubs in
// minions_autosign are removed, and a stub named id accepts once.
func (m *Master) checkAutosignDir(id string, o AuthOptions) bool {
	dir := filepath.Join(m.Dir, AutosignDir)
	timeout := o.AutosignTimeout
	if timeout == 0 {
		timeout = 120 * time.Minute
	}
	if timeout > 0 {
		cutoff := time.Now().Add(-timeout)
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if info, err := d.Info(); err == nil && info.ModTime().Before(cutoff) {
				_ = os.Remove(filepath.Join(dir, d.Name()))
			}
			return nil
		})
	}
	stub := filepath.Join(dir, id)
	if _, err := os.Stat(stub); err != nil {
		return false
	}
	return os.Remove(stub) == nil
}

// checkAutosignGrains is AutoKey.check_autosign_grains: a file named
// after a grain in autosign_grains_dir lists accepted values.
func (m *Master) checkAutosignGrains(grains *ordered.Map, o AuthOptions) bool {
	if grains.Len() == 0 || o.AutosignGrainsDir == "" {
		return false
	}
	found := false
	_ = filepath.WalkDir(o.AutosignGrainsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found {
			return nil
		}
		v, ok := grains.Get(d.Name())
		if !ok {
			return nil
		}
		path := filepath.Join(o.AutosignGrainsDir, d.Name())
		st, err := os.Stat(path)
		if err != nil || !permsOK(st, o) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		want, isStr := v.(string)
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				continue
			}
			if isStr && want == line {
				found = true
				return fs.SkipAll
			}
		}
		return nil
	})
	return found
}

// Reply returns the "ret" of a refusal: "full", or the boolean.
func (o *AuthOutcome) Reply() any {
	if o.Full {
		return "full"
	}
	return o.Ret
}

// AuthEvent returns the salt/auth event for an outcome.
func AuthEvent(out *AuthOutcome) Event { return Event{Tag: protocol.AuthTag(), Data: out.Event} }
