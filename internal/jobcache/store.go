package jobcache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/jid"
	"github.com/brinesalt/brine/internal/ordered"
)

// Store is a job cache: the returner functions Salt calls on its
// master_job_cache and ext_job_cache (salt/utils/job.py store_job,
// salt/daemons/masterapi.py, salt/runners/jobs.py), which local_cache,
// mysql and pgjsonb each implement. Loads and returns are Salt's dicts,
// so what one store holds reads the same from another.
type Store interface {
	// Name is the returner's name: local_cache, mysql, pgjsonb.
	Name() string
	// PrepJID is prep_jid: passed when given, else a new jid.
	PrepJID(ctx context.Context, passed string) (string, error)
	// SaveLoad is save_load: the publish load and the minions targeted.
	SaveLoad(ctx context.Context, jid string, load *ordered.Map, minions []string) error
	// Returner is returner(ret): one minion's return dict (id, jid, fun,
	// return, retcode, success, out …). A second return of a jid from
	// a minion wraps ErrDuplicate where the store can tell.
	Returner(ctx context.Context, ret *ordered.Map) error
	// GetLoad is get_load, with the targeted minions under "Minions"
	// as local_cache adds them; an unknown jid wraps ErrUnknownJob.
	GetLoad(ctx context.Context, jid string) (*ordered.Map, error)
	// GetJID is get_jid: minion id → the return dict the store keeps.
	GetJID(ctx context.Context, jid string) (*ordered.Map, error)
	// GetFun is get_fun: minion id → its latest return of fun.
	GetFun(ctx context.Context, fun string) (*ordered.Map, error)
	// GetJIDs is get_jids: every job with its load, oldest first. A
	// store may leave out of the load what format_job_instance does
	// not read, and may hand out loads it keeps between calls: the
	// loads are read-only.
	GetJIDs(ctx context.Context) ([]Job, error)
	// GetMinions is get_minions: the ids that returned anything.
	GetMinions(ctx context.Context) ([]string, error)
	// CleanOldJobs is clean_old_jobs: remove what is older than keep
	// (keep_jobs_seconds; 0 keeps everything) and say how much went.
	CleanOldJobs(ctx context.Context, keep time.Duration) (int, error)
	// Close releases the store, writing out what it buffered.
	Close() error
}

// EventReturner is a store that keeps bus events (event_return).
type EventReturner interface {
	EventReturn(ctx context.Context, events []Event) error
}

// Event is one bus event for event_return.
type Event struct {
	Tag  string
	Data *ordered.Map
}

// JobSaver is a store that saves a job's load and its one return in
// one call, for a runner job, whose load (store_job's: the job's data)
// and return hold the same runner answer: such a store encodes it once.
// The load and ret are those SaveLoad and Returner would be given.
type JobSaver interface {
	SaveJob(ctx context.Context, jid string, load, ret *ordered.Map) error
}

// Job is one get_jids entry.
type Job struct {
	JID  string
	Load *ordered.Map
}

// ErrUnsupported is a returner function a store does not have.
var ErrUnsupported = errors.New("returner function not supported")

// Config is what opening a store needs: the returner's options as
// ReturnerOptions resolved them, and the process's own settings.
type Config struct {
	// Options are the returner's resolved options (host, user, db …);
	// when nil the store resolves its own through Lookup.
	Options map[string]any
	// Lookup reads the process's options by name (config.option).
	Lookup Lookup
	// CacheDir is the cachedir: local_cache's jobs and the spool of the
	// database stores live under it.
	CacheDir string
	// MasterID is __opts__["id"], salt_events.master_id.
	MasterID string
	// UniqueJID is unique_jid: jids carry "_<pid>".
	UniqueJID bool
	// ArchiveJobs is archive_jobs: clean-up moves rows to *_archive.
	ArchiveJobs bool
	// KeepJobs is keep_jobs_seconds, for the stores whose get_jids
	// leaves out what it has expired (postgres_local_cache); 0 keeps all.
	KeepJobs time.Duration
	// Direct skips the on-disk spool: every write goes to the database
	// before the call returns (minion-side returners).
	Direct bool
	// SpoolMax bounds the bytes a spooled store keeps on disk for the
	// database (job_cache_spool_max_bytes); 0 is the store's default.
	SpoolMax int64
	// Log reports what a store does in the background.
	Log Logger
}

// Logger is the part of *slog.Logger a store logs through.
type Logger interface {
	Info(msg string, args ...any)
	Warn(msg string, args ...any)
	Error(msg string, args ...any)
}

// Opener opens a store.
type Opener func(ctx context.Context, c Config) (Store, error)

var (
	openersMu sync.RWMutex
	openers   = map[string]Opener{}
)

// Register adds a store under its returner name; a duplicate is a
// programming error.
func Register(name string, o Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if _, dup := openers[name]; dup {
		panic("jobcache: duplicate store " + name)
	}
	openers[name] = o
}

// ErrUnknownStore is a job cache name nothing registered.
var ErrUnknownStore = errors.New("no such job cache returner")

// Open opens the store registered under name.
func Open(ctx context.Context, name string, c Config) (Store, error) {
	openersMu.RLock()
	o, ok := openers[name]
	openersMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("open job cache %s: %w", name, ErrUnknownStore)
	}
	return o(ctx, c)
}

// Names lists the registered stores.
func Names() []string {
	openersMu.RLock()
	defer openersMu.RUnlock()
	out := make([]string, 0, len(openers))
	for n := range openers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// NewJID is salt.utils.jid.gen_jid: a new jid, with unique_jid "_<pid>"
// after it.
func NewJID(unique bool) string {
	j := jid.New(time.Now())
	if unique {
		j += "_" + strconv.Itoa(os.Getpid())
	}
	return j
}

// IsJID is salt.utils.jid.is_jid.
func IsJID(s string) bool {
	if len(s) != 20 && (len(s) <= 21 || s[20] != '_') {
		return false
	}
	for _, c := range s[:20] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
