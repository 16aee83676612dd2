// Package jobcache is the master's durable job cache in Salt's
// local_cache layout (salt/returners/local_cache.py): cachedir/jobs/
// <h[:2]>/<h[2:]>/ for h = sha256(jid), holding "jid", ".load.p" (the
// publish load, msgpack), ".minions.p" (the targeted ids) and one
// <minion>/return.p ({return, retcode, success}) and out.p per return.
// A second return of the same jid from a minion is refused, as Salt
// refuses a replay.
package jobcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
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

// Cache is cachedir/jobs, the local_cache Store.
type Cache struct {
	Dir string
	// UniqueJID is unique_jid: new jids end in "_<pid>".
	UniqueJID bool

	loads loadIndex
}

// New returns the cache under cachedir.
func New(cachedir string) *Cache { return &Cache{Dir: filepath.Join(cachedir, "jobs")} }

func init() {
	Register("local_cache", func(_ context.Context, c Config) (Store, error) {
		jc := New(c.CacheDir)
		jc.UniqueJID = c.UniqueJID
		return jc, nil
	})
}

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

// Name is "local_cache".
func (c *Cache) Name() string { return "local_cache" }

// PrepJID is local_cache.prep_jid: a passed jid as it is; otherwise a
// new one whose directory this call creates, so two jobs never share a
// jid in one cache (a clash makes another, five times at most).
func (c *Cache) PrepJID(_ context.Context, passed string) (string, error) {
	if passed != "" {
		return passed, nil
	}
	for range 5 {
		jid := NewJID(c.UniqueJID)
		dir := c.JIDDir(jid)
		if err := mkdirJID(dir); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return "", fmt.Errorf("prep jid: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "jid"), []byte(jid), 0o600); err != nil {
			return "", fmt.Errorf("prep jid: %w", err)
		}
		return jid, nil
	}
	return "", fmt.Errorf("prep jid: could not store a jid after 5 tries: %w", ErrDuplicate)
}

// SaveLoad records a published job: its load and the minions expected.
func (c *Cache) SaveLoad(_ context.Context, jid string, load *ordered.Map, minions []string) error {
	dir := c.JIDDir(jid)
	if err := ensureJIDDir(dir, jid); err != nil {
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

// ensureJIDDir makes a job's directory with its jid file, as
// prep_jid(passed_jid=jid) does, unless the directory is there: then
// PrepJID (or an earlier SaveLoad) wrote the jid file already, and
// Salt's save_load writes none (salt/returners/local_cache.py). One
// mkdir on the common path, where a MkdirAll and a rewrite of the jid
// file cost four more system calls per job.
func ensureJIDDir(dir, jid string) error {
	err := mkdirJID(dir)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case err != nil:
		return err
	}
	return os.WriteFile(filepath.Join(dir, "jid"), []byte(jid), 0o600)
}

// mkdirJID makes a jid directory, its <h[:2]> parent only when the
// mkdir says the parent is missing (one system call where MkdirAll
// makes two). An existing directory is fs.ErrExist.
func mkdirJID(dir string) error {
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(dir), 0o700); err == nil {
			err = os.Mkdir(dir, 0o700)
		}
	}
	return err
}

// Returner stores one minion's return dict: return, retcode and success
// in return.p, out in out.p. A jid the cache does not know wraps
// ErrUnknownJob; a second return from the minion ErrDuplicate.
func (c *Cache) Returner(_ context.Context, ret *ordered.Map) error {
	jid, _ := ret.Value("jid").(string)
	id, _ := ret.Value("id").(string)
	if jid == "" || id == "" || !validName(id) {
		return fmt.Errorf("save return %q from %q: %w", jid, id, protocol.ErrBadLoad)
	}
	// The mkdir tells an unknown job (no jid directory: ENOENT) from a
	// replay (EEXIST), as local_cache.returner tells them.
	hn := filepath.Join(c.JIDDir(jid), id)
	if err := os.Mkdir(hn, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("save return %s from %s: %w", jid, id, ErrDuplicate)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("save return %s from %s: %w", jid, id, ErrUnknownJob)
		}
		return fmt.Errorf("save return %s from %s: %w", jid, id, err)
	}
	stored := ordered.New()
	for _, k := range []string{"return", "retcode", "success"} {
		if v, ok := ret.Get(k); ok {
			stored.Set(k, v)
		}
	}
	if err := write(filepath.Join(hn, ReturnP), stored); err != nil {
		return fmt.Errorf("save return %s from %s: %w", jid, id, err)
	}
	if out, ok := ret.Get("out"); ok {
		if err := write(filepath.Join(hn, OutP), out); err != nil {
			return fmt.Errorf("save return %s from %s: %w", jid, id, err)
		}
	}
	return nil
}

// validName is a minion id that is one path element.
func validName(id string) bool {
	return id != "." && id != ".." && !strings.ContainsAny(id, "/\x00") && !strings.HasPrefix(id, ".")
}

// GetLoad is local_cache.get_load: the job's load, with the targeted
// minions (sorted) under "Minions".
func (c *Cache) GetLoad(_ context.Context, jid string) (*ordered.Map, error) {
	v, err := read(filepath.Join(c.JIDDir(jid), LoadP))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("load job %s: %w", jid, ErrUnknownJob)
		}
		return nil, fmt.Errorf("load job %s: %w", jid, err)
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("load job %s: not a map: %w", jid, protocol.ErrBadLoad)
	}
	if ids := c.minions(jid); len(ids) > 0 {
		sort.Strings(ids)
		l := make([]any, len(ids))
		for i, id := range ids {
			l[i] = id
		}
		m.Set("Minions", l)
	}
	return m, nil
}

// minions returns the ids a job targeted: .minions.p and, on a master
// of masters, each syndic's .minions.<syndic id>.p, without repeats
// (local_cache.get_load reads them all).
func (c *Cache) minions(jid string) []string {
	dir := c.JIDDir(jid)
	files := []string{filepath.Join(dir, MinionsP)}
	more, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf(SyndicMinionsP, "*")))
	files = append(files, more...)
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		v, _ := read(f)
		l, _ := v.([]any)
		for _, x := range l {
			if s, ok := x.(string); ok && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// SyndicMinionsP is local_cache's SYNDIC_MINIONS_P: the minions a
// syndic's lower master expected for a job, named by the syndic id.
const SyndicMinionsP = ".minions.%s.p"

// MinionSaver is a store with local_cache's save_minions: the minions a
// lower master expected for a job, from the syndic that relays it.
type MinionSaver interface {
	SaveMinions(ctx context.Context, jid string, minions []string, syndicID string) error
}

// SaveMinions is local_cache.save_minions: .minions.<syndic id>.p, or
// .minions.p when syndicID is empty, creating the job directory as Salt
// does. A syndic id that is not one path element is refused.
func (c *Cache) SaveMinions(_ context.Context, jid string, minions []string, syndicID string) error {
	name := MinionsP
	if syndicID != "" {
		if !validName(syndicID) {
			return fmt.Errorf("save minions of %s from syndic %q: %w", jid, syndicID, protocol.ErrBadLoad)
		}
		name = fmt.Sprintf(SyndicMinionsP, syndicID)
	}
	dir := c.JIDDir(jid)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save minions of %s: %w", jid, err)
	}
	ids := make([]any, len(minions))
	for i, m := range minions {
		ids[i] = m
	}
	if err := write(filepath.Join(dir, name), ids); err != nil {
		return fmt.Errorf("save minions of %s: %w", jid, err)
	}
	return nil
}

// GetJID is local_cache.get_jid: each minion's stored return dict
// ({return, retcode, success}), with "out" when it named an outputter,
// by minion id in name order. An unknown jid is an empty map.
func (c *Cache) GetJID(_ context.Context, jid string) (*ordered.Map, error) {
	dir := c.JIDDir(jid)
	out := ordered.New()
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return out, nil
		}
		return nil, fmt.Errorf("returns of %s: %w", jid, err)
	}
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		v, err := read(filepath.Join(dir, e.Name(), ReturnP))
		if err != nil {
			continue
		}
		m, ok := v.(*ordered.Map)
		if !ok || !m.Has("return") {
			// Salt's old layout: return.p held only the return.
			m = ordered.FromPairs("return", v)
		}
		if o, err := read(filepath.Join(dir, e.Name(), OutP)); err == nil {
			m.Set("out", o)
		}
		out.Set(e.Name(), m)
	}
	return out, nil
}

// GetFun is not a local_cache function.
func (c *Cache) GetFun(context.Context, string) (*ordered.Map, error) {
	return nil, fmt.Errorf("local_cache.get_fun: %w", ErrUnsupported)
}

// GetMinions is not a local_cache function.
func (c *Cache) GetMinions(context.Context) ([]string, error) {
	return nil, fmt.Errorf("local_cache.get_minions: %w", ErrUnsupported)
}

// GetJIDs is local_cache.get_jids: every job whose load reads, oldest
// first, its jid from the load as _walk_through takes it (the jid file
// when the load has none). The directories are read by a few workers.
func (c *Cache) GetJIDs(ctx context.Context) ([]Job, error) {
	tops, _ := os.ReadDir(c.Dir)
	work := make(chan string)
	var mu sync.Mutex
	var out []Job
	seen := make(map[string]loadEntry, c.loads.size())
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []Job
			got := map[string]loadEntry{}
			for top := range work {
				mine = c.loads.readJobs(top, mine, got)
			}
			mu.Lock()
			out = append(out, mine...)
			for k, v := range got {
				seen[k] = v
			}
			mu.Unlock()
		}()
	}
	for _, t := range tops {
		if ctx.Err() != nil {
			break
		}
		work <- filepath.Join(c.Dir, t.Name())
	}
	close(work)
	wg.Wait()
	c.loads.replace(seen)
	sort.Slice(out, func(i, j int) bool { return out[i].JID < out[j].JID })
	return out, ctx.Err()
}

// loadIndex keeps the loads get_jids decoded, each with its .load.p's
// stat, so that a later get_jids stats a job's load (one system call)
// instead of reading and decoding it again (five and the decode). A
// load is reused only while its file is the same file (device and
// inode), of the same size and modification time; one modified within
// the last two seconds is never kept, so a rewrite within the clock's
// granularity cannot go unseen (git's racy-clean rule). It holds only
// the jobs the last get_jids saw. The loads it hands out are shared:
// read-only, as list_jobs uses them.
type loadIndex struct {
	mu sync.Mutex
	m  map[string]loadEntry // by .load.p path
}

type loadEntry struct {
	fi  fs.FileInfo
	job Job
}

func (x *loadIndex) size() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.m)
}

func (x *loadIndex) get(path string) (loadEntry, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, ok := x.m[path]
	return e, ok
}

func (x *loadIndex) replace(m map[string]loadEntry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.m = m
}

// racyWindow is how recent a modification time keeps a load out of the
// index.
const racyWindow = 2 * time.Second

// readJobs appends the loads of the jobs under one top directory to
// out, and the ones fit to keep to keep. A runner job's load holds the
// runner's whole answer under "return" (store_job saves it so), which
// no summary shows: it is stepped over unbuilt, as the SQL stores leave
// it unread.
func (x *loadIndex) readJobs(top string, out []Job, keep map[string]loadEntry) []Job {
	subs, _ := os.ReadDir(top)
	now := time.Now()
	for _, s := range subs {
		dir := filepath.Join(top, s.Name())
		path := filepath.Join(dir, LoadP)
		fi, err := os.Lstat(path)
		if err != nil {
			continue
		}
		if e, ok := x.get(path); ok && os.SameFile(e.fi, fi) && e.fi.Size() == fi.Size() && e.fi.ModTime().Equal(fi.ModTime()) {
			out = append(out, e.job)
			keep[path] = e
			continue
		}
		job, ok := readJob(dir, path)
		if !ok {
			continue
		}
		out = append(out, job)
		if now.Sub(fi.ModTime()) > racyWindow {
			keep[path] = loadEntry{fi: fi, job: job}
		}
	}
	return out
}

// readJob reads and decodes one job's load.
func readJob(dir, path string) (Job, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Job{}, false
	}
	m, err := protocol.Decoder{}.UnmarshalMapOmitting(b, "return")
	if err != nil {
		return Job{}, false
	}
	jid, _ := m.Value("jid").(string)
	if jid == "" {
		b, err := os.ReadFile(filepath.Join(dir, "jid"))
		if err != nil {
			return Job{}, false
		}
		jid = strings.TrimSpace(string(b))
	}
	return Job{JID: jid, Load: m}, true
}

// CleanOldJobs is local_cache.clean_old_jobs (see Clean).
func (c *Cache) CleanOldJobs(_ context.Context, keep time.Duration) (int, error) {
	return c.Clean(keep, time.Now())
}

// Close does nothing: every write is on disk when it returns.
func (c *Cache) Close() error { return nil }

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
// A jid of 20 digits whose fields are in range is laid out from its own
// digits, as Salt's does (list_jobs formats one per job); any other goes
// through the time parser, which refuses what is not a time.
func FormatJIDTime(jid string) string {
	if s, ok := jidTimeFast(jid); ok {
		return s
	}
	t, err := JIDTime(jid)
	if err != nil || len(jid) < 20 {
		return ""
	}
	return t.Format("2006, Jan 02 15:04:05") + "." + jid[14:20]
}

var monthAbbr = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// jidTimeFast is FormatJIDTime for the jids every day's clock makes:
// false for anything the time parser would have to judge (day 29 and
// later, whose month may not have it, included).
func jidTimeFast(jid string) (string, bool) {
	if len(jid) < 20 {
		return "", false
	}
	n := func(i, j int) int {
		v := 0
		for _, c := range []byte(jid[i:j]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	mon, day, h, mi, sec := n(4, 6), n(6, 8), n(8, 10), n(10, 12), n(12, 14)
	if n(0, 4) < 0 || n(14, 20) < 0 || mon < 1 || mon > 12 || day < 1 || day > 28 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return "", false
	}
	var b strings.Builder
	b.Grow(28)
	b.WriteString(jid[:4])
	b.WriteString(", ")
	b.WriteString(monthAbbr[mon-1])
	b.WriteByte(' ')
	b.WriteString(jid[6:8])
	b.WriteByte(' ')
	b.WriteString(jid[8:10])
	b.WriteByte(':')
	b.WriteString(jid[10:12])
	b.WriteByte(':')
	b.WriteString(jid[12:14])
	b.WriteByte('.')
	b.WriteString(jid[14:20])
	return b.String(), true
}
