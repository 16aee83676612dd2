// Package jobcache is the master's durable job cache in Salt's
// local_cache layout (salt/returners/local_cache.py): cachedir/jobs/
// <h[:2]>/<h[2:]>/ for h = sha256(jid), holding "jid", ".load.p" (the
// publish load, msgpack), ".minions.p" (the targeted ids) and one
// <minion>/return.p ({return, retcode, success}) and out.p per return.
// A second return of the same jid from a minion is refused, as Salt
// refuses a replay.
package jobcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// Salt's file names.
const (
	LoadP    = ".load.p"
	MinionsP = ".minions.p"
	ReturnP  = "return.p"
	OutP     = "out.p"
)

// ErrDuplicate is a second return of a job from the same minion.
var ErrDuplicate = errors.New("duplicate return")

// ErrUnknownJob is a return for a jid the cache does not hold.
var ErrUnknownJob = errors.New("unknown job")

// Cache is cachedir/jobs.
type Cache struct{ Dir string }

// New returns the cache under cachedir.
func New(cachedir string) *Cache { return &Cache{Dir: filepath.Join(cachedir, "jobs")} }

// JIDDir is salt.utils.jid.jid_dir with hash_type sha256.
func (c *Cache) JIDDir(jid string) string {
	h := sha256.Sum256([]byte(jid))
	s := hex.EncodeToString(h[:])
	return filepath.Join(c.Dir, s[:2], s[2:])
}

func write(path string, v any) error {
	b, err := protocol.Marshal(v)
	if err != nil {
		return err
	}
	return writeAtomic(path, b)
}

// writeAtomic writes through a temporary file renamed over path, as
// salt.utils.atomicfile does, so readers never see a partial file. Like
// Salt it does not fsync: a job cache entry is not worth a disk flush
// per return.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(f.Name())
	}
	return werr
}

func read(path string) (any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return protocol.Unmarshal(b)
}

// SaveLoad records a published job: its load and the minions expected.
func (c *Cache) SaveLoad(jid string, load *ordered.Map, minions []string) error {
	dir := c.JIDDir(jid)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save job %s: %w", jid, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jid"), []byte(jid), 0o600); err != nil {
		return fmt.Errorf("save job %s: %w", jid, err)
	}
	ids := make([]any, len(minions))
	for i, m := range minions {
		ids[i] = m
	}
	if err := write(filepath.Join(dir, LoadP), load); err != nil {
		return fmt.Errorf("save job %s: %w", jid, err)
	}
	if err := write(filepath.Join(dir, MinionsP), ids); err != nil {
		return fmt.Errorf("save job %s: %w", jid, err)
	}
	return nil
}

// SaveReturn stores one minion's return. A jid the cache does not know
// wraps ErrUnknownJob; a second return from the minion ErrDuplicate.
func (c *Cache) SaveReturn(r *protocol.Return) error {
	dir := c.JIDDir(r.JID)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("save return %s from %s: %w", r.JID, r.ID, ErrUnknownJob)
	}
	hn := filepath.Join(dir, r.ID)
	if err := os.Mkdir(hn, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("save return %s from %s: %w", r.JID, r.ID, ErrDuplicate)
		}
		return fmt.Errorf("save return %s from %s: %w", r.JID, r.ID, err)
	}
	ret := ordered.FromPairs("return", r.Return, "retcode", r.Retcode, "success", r.Success)
	if err := write(filepath.Join(hn, ReturnP), ret); err != nil {
		return fmt.Errorf("save return %s from %s: %w", r.JID, r.ID, err)
	}
	if r.Out != "" {
		if err := write(filepath.Join(hn, OutP), r.Out); err != nil {
			return fmt.Errorf("save return %s from %s: %w", r.JID, r.ID, err)
		}
	}
	return nil
}

// Load returns a job's publish load.
func (c *Cache) Load(jid string) (*ordered.Map, error) {
	v, err := read(filepath.Join(c.JIDDir(jid), LoadP))
	if err != nil {
		return nil, fmt.Errorf("load job %s: %w", jid, err)
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("load job %s: not a map: %w", jid, protocol.ErrBadLoad)
	}
	return m, nil
}

// Minions returns the ids a job targeted.
func (c *Cache) Minions(jid string) []string {
	v, _ := read(filepath.Join(c.JIDDir(jid), MinionsP))
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Return is one stored return.
type Return struct {
	Return  any
	Retcode int
	Success bool
	Out     string
}

// Returns returns the stored returns of a job by minion id.
func (c *Cache) Returns(jid string) (map[string]Return, error) {
	dir := c.JIDDir(jid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("returns of %s: %w", jid, err)
	}
	out := map[string]Return{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		v, err := read(filepath.Join(dir, e.Name(), ReturnP))
		if err != nil {
			continue
		}
		m, _ := v.(*ordered.Map)
		r := Return{Return: m.Value("return")}
		r.Retcode, _ = protocol.AsInt(m.Value("retcode"))
		r.Success, _ = m.Value("success").(bool)
		if o, err := read(filepath.Join(dir, e.Name(), OutP)); err == nil {
			r.Out, _ = o.(string)
		}
		out[e.Name()] = r
	}
	return out, nil
}

// JIDs lists the cached job ids, oldest first.
func (c *Cache) JIDs() []string {
	var out []string
	tops, _ := os.ReadDir(c.Dir)
	for _, t := range tops {
		subs, _ := os.ReadDir(filepath.Join(c.Dir, t.Name()))
		for _, s := range subs {
			b, err := os.ReadFile(filepath.Join(c.Dir, t.Name(), s.Name(), "jid"))
			if err == nil {
				out = append(out, strings.TrimSpace(string(b)))
			}
		}
	}
	sort.Strings(out)
	return out
}

// Clean removes jobs older than keep (keep_jobs_seconds), judged by the
// jid's timestamp or, failing that, the directory's mtime, as
// local_cache.clean_old_jobs does. It returns how many were removed.
func (c *Cache) Clean(keep time.Duration, now time.Time) (int, error) {
	if keep <= 0 {
		return 0, nil
	}
	n := 0
	tops, _ := os.ReadDir(c.Dir)
	for _, t := range tops {
		top := filepath.Join(c.Dir, t.Name())
		subs, _ := os.ReadDir(top)
		for _, s := range subs {
			dir := filepath.Join(top, s.Name())
			if now.Sub(jobTime(dir)) > keep {
				if err := os.RemoveAll(dir); err != nil {
					return n, fmt.Errorf("clean jobs: %w", err)
				}
				n++
			}
		}
		if rest, _ := os.ReadDir(top); len(rest) == 0 {
			_ = os.Remove(top)
		}
	}
	return n, nil
}

func jobTime(dir string) time.Time {
	if b, err := os.ReadFile(filepath.Join(dir, "jid")); err == nil {
		if t, err := JIDTime(strings.TrimSpace(string(b))); err == nil {
			return t
		}
	}
	if st, err := os.Stat(dir); err == nil {
		return st.ModTime()
	}
	return time.Time{}
}

// JIDTime parses a jid's %Y%m%d%H%M%S%f timestamp (local time, as Salt
// writes it).
func JIDTime(jid string) (time.Time, error) {
	if len(jid) < 14 {
		return time.Time{}, fmt.Errorf("jid %q: too short", jid)
	}
	return time.ParseInLocation("20060102150405", jid[:14], time.Local)
}

// FormatJIDTime is salt.utils.jid.jid_to_time: "2026, Dec 01 02:03:04.000005".
func FormatJIDTime(jid string) string {
	t, err := JIDTime(jid)
	if err != nil || len(jid) < 20 {
		return ""
	}
	return t.Format("2006, Jan 02 15:04:05") + "." + jid[14:20]
}
