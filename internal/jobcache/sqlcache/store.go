// Package sqlcache is the database job caches and returners, mysql
// (salt/returners/mysql.py), pgjsonb (salt/returners/pgjsonb.py) and
// postgres_local_cache (salt/returners/postgres_local_cache.py), with
// Salt's tables, so Salt masters, dashboards and Brine read one
// another's rows. On a master every write goes first to an on-disk
// spool and from there to the database in batches, in order, exactly
// once (see spool); minion-side returners write directly.
package sqlcache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

func init() {
	jobcache.Register("mysql", func(ctx context.Context, c jobcache.Config) (jobcache.Store, error) {
		return Open(ctx, mysqlDialect{}, c)
	})
	jobcache.Register("pgjsonb", func(ctx context.Context, c jobcache.Config) (jobcache.Store, error) {
		return Open(ctx, pgDialect{}, c)
	})
	jobcache.Register("postgres_local_cache", func(ctx context.Context, c jobcache.Config) (jobcache.Store, error) {
		return Open(ctx, plcDialect{}, c)
	})
}

// ErrRefused is a write the store will not make: a value too long for
// its column, or one the database refused on its own.
var ErrRefused = errors.New("refused by the job cache")

// DefaultSpoolMax is how many bytes of writes a master keeps on disk
// while its database is away (job_cache_spool_max_bytes).
const DefaultSpoolMax = 512 << 20

// Batch limits: rows per transaction and about how many bytes.
const (
	batchRows  = 1000
	batchBytes = 4 << 20
)

// Store is a mysql, pgjsonb or postgres_local_cache job cache.
type Store struct {
	d   dialect
	db  *sql.DB
	cfg jobcache.Config
	log jobcache.Logger
	sp  *spool // nil when Direct

	jids decodedLoads // get_jids' loads, kept between calls

	prepMu    sync.Mutex
	prepared  bool
	packetMax int // mysql's max_allowed_packet; 0 for none

	down     atomic.Bool
	written  atomic.Int64
	refused  atomic.Int64
	closing  chan struct{}
	closed   chan struct{}
	cancel   context.CancelFunc
	closeErr error
	once     sync.Once
}

// Open opens a store of dialect d. Unless c.Direct, it takes a spool
// under cachedir/jobcache-spool/<name>/ and starts the writer; the
// database need not be up: the writer says once that it is not, keeps
// the writes on disk and sends them when it comes back.
func Open(ctx context.Context, d dialect, c jobcache.Config) (*Store, error) {
	if c.Options == nil {
		c.Options = Options(d.name(), c.Lookup, nil)
	}
	db, warns, err := d.open(c.Options)
	if err != nil {
		return nil, fmt.Errorf("open %s job cache: %w", d.name(), err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &Store{d: d, db: db, cfg: c, log: c.Log, closing: make(chan struct{}), closed: make(chan struct{})}
	if s.log == nil {
		s.log = nopLogger{}
	}
	for _, w := range warns {
		s.log.Warn(d.name() + " job cache: " + w)
	}
	if c.Direct {
		close(s.closed)
		return s, nil
	}
	limit := int64(DefaultSpoolMax)
	if c.SpoolMax > 0 {
		limit = c.SpoolMax
	}
	s.sp, err = openSpool(filepath.Join(c.CacheDir, "jobcache-spool", d.name()), limit)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s job cache: %w", d.name(), err)
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	go s.run(wctx)
	return s, nil
}

// Name is the returner's name.
func (s *Store) Name() string { return s.d.name() }

// Written and Refused count the rows the store wrote and refused.
func (s *Store) Written() int64 { return s.written.Load() }

// Refused counts the writes refused (see ErrRefused).
func (s *Store) Refused() int64 { return s.refused.Load() }

// Pending is how many writes wait in the spool for the database.
func (s *Store) Pending() int {
	if s.sp == nil {
		return 0
	}
	n, _ := s.sp.stats()
	return n
}

// PrepJID is prep_jid: the passed jid, else gen_jid.
func (s *Store) PrepJID(_ context.Context, passed string) (string, error) {
	if passed != "" {
		return passed, nil
	}
	return jobcache.NewJID(s.cfg.UniqueJID), nil
}

// encode is salt.utils.json.dumps: one line, ensure_ascii, so the text
// fits Salt's utf8 (three-byte) MySQL columns whatever the data holds;
// strings that are not UTF-8 are stored with U+FFFD for the bad bytes.
func encode(v any) (string, error) {
	return py.JSON(v, py.JSONOptions{Indent: -1, EnsureASCII: true})
}

// encodeReturn is the JSON of a return and of the whole ret dict
// (full_ret), the return encoded once and put into both: json.dumps of
// the dict, item by item, with Salt's separators.
func encodeReturn(ret *ordered.Map) (rtext, full string, err error) {
	if rtext, err = encode(ret.Value("return")); err != nil {
		return "", "", err
	}
	full, err = encodeWith(ret, "return", rtext)
	return rtext, full, err
}

// encodeWith is the JSON of m with the value under key already encoded
// as text.
func encodeWith(m *ordered.Map, key, text string) (string, error) {
	var b strings.Builder
	var err error
	b.Grow(len(text) + 256)
	b.WriteByte('{')
	m.Range(func(k, v any) bool {
		if b.Len() > 1 {
			b.WriteString(", ")
		}
		name, ok := k.(string)
		if !ok {
			err = fmt.Errorf("key %v is not a string", k)
			return false
		}
		b.WriteString(py.QuoteJSON(name, true))
		b.WriteString(": ")
		if name == key {
			b.WriteString(text)
			return true
		}
		var t string
		if t, err = encode(v); err != nil {
			return false
		}
		b.WriteString(t)
		return true
	})
	b.WriteByte('}')
	return b.String(), err
}

// SaveJob is SaveLoad and Returner of a job whose load and ret hold the
// same "return" (a runner job: store_job's load is the job's data),
// that value encoded once for the load, the return and full_ret; a
// runner's answer (a list_jobs of every job) is most of both.
// postgres_local_cache, which stores str() of a return, saves the two
// as usual.
func (s *Store) SaveJob(ctx context.Context, jid string, load, ret *ordered.Map) error {
	if s.d.name() == "postgres_local_cache" {
		if err := s.SaveLoad(ctx, jid, load, nil); err != nil {
			return err
		}
		return s.Returner(ctx, ret)
	}
	shared, err := encode(ret.Value("return"))
	if err != nil {
		return fmt.Errorf("save job %s: %w", jid, err)
	}
	ltext, err := encodeWith(load, "return", shared)
	if err != nil {
		return fmt.Errorf("save load %s: %w", jid, err)
	}
	if err := s.put(ctx, &record{kind: kindLoad, at: time.Now().UnixMicro(), jid: jid, ret: ltext}); err != nil {
		return err
	}
	full, err := encodeWith(ret, "return", shared)
	if err != nil {
		return fmt.Errorf("save return %s: %w", jid, err)
	}
	return s.put(ctx, returnRecord(jid, ret, shared, full))
}

// SaveLoad is save_load. The minions targeted are kept in the load as
// "Minions", where Salt's jobs.list_job reads them from a job cache.
func (s *Store) SaveLoad(ctx context.Context, jid string, load *ordered.Map, minions []string) error {
	l := load.Copy()
	if len(minions) > 0 {
		ids := make([]any, len(minions))
		for i, m := range minions {
			ids[i] = m
		}
		l.Set("Minions", ids)
	}
	text, err := encode(l)
	if err != nil {
		return fmt.Errorf("save load %s: %w", jid, err)
	}
	return s.put(ctx, &record{kind: kindLoad, at: time.Now().UnixMicro(), jid: jid, ret: text})
}

// Returner is returner(ret): one row in salt_returns with the return
// and the whole ret dict as JSON. A standalone job (jid "req") first
// gets a jid and its load, as mysql.returner does.
func (s *Store) Returner(ctx context.Context, ret *ordered.Map) error {
	jid, _ := ret.Value("jid").(string)
	if jid == "req" {
		var err error
		if jid, err = s.PrepJID(ctx, ""); err != nil {
			return err
		}
		ret = ret.Copy()
		ret.Set("jid", jid)
		if err := s.SaveLoad(ctx, jid, ret, nil); err != nil {
			return err
		}
	}
	rtext, full, err := s.d.returnTexts(ret)
	if err != nil {
		return fmt.Errorf("save return %s: %w", jid, err)
	}
	return s.put(ctx, returnRecord(jid, ret, rtext, full))
}

// returnRecord is the salt_returns record of ret with its texts.
func returnRecord(jid string, ret *ordered.Map, rtext, full string) *record {
	r := &record{kind: kindReturn, at: time.Now().UnixMicro(), jid: jid, ret: rtext, full: full}
	r.id, _ = ret.Value("id").(string)
	r.fun, _ = ret.Value("fun").(string)
	r.succ, _ = ret.Value("success").(bool)
	return r
}

// EventReturn is event_return: one salt_events row per event, with
// this master's id.
func (s *Store) EventReturn(ctx context.Context, events []jobcache.Event) error {
	recs := make([]*record, 0, len(events))
	at := time.Now().UnixMicro()
	for _, e := range events {
		data := e.Data
		if data == nil {
			data = ordered.New()
		}
		text, err := encode(data)
		if err != nil {
			return fmt.Errorf("event %s: %w", e.Tag, err)
		}
		r := &record{kind: kindEvent, at: at, id: e.Tag, ret: text}
		if err := s.check(r); err != nil {
			s.refuse(r, err)
			continue
		}
		r.size = len(r.id) + len(r.ret) + 64
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		return nil
	}
	if s.sp == nil {
		return s.writeDirect(ctx, recs)
	}
	return s.sp.append(recs...)
}

// put checks a record and spools it, or writes it at once when Direct.
func (s *Store) put(ctx context.Context, r *record) error {
	r.size = len(r.jid) + len(r.id) + len(r.fun) + len(r.ret) + len(r.full) + 64
	if err := s.check(r); err != nil {
		s.refuse(r, err)
		return err
	}
	if s.sp == nil {
		return s.writeDirect(ctx, []*record{r})
	}
	return s.sp.append(r)
}

// check refuses what Salt's columns cannot hold: jid, id and tag past
// varchar(255), fun past varchar(50), JSON past the text column.
func (s *Store) check(r *record) error {
	limit := func(what, v string, n int) error {
		if c := len([]rune(v)); c > n {
			return fmt.Errorf("%s is %d characters, the column holds %d: %w", what, c, n, ErrRefused)
		}
		return nil
	}
	var errs []error
	lim := s.d.limits()
	switch r.kind {
	case kindEvent:
		errs = append(errs, limit("tag", r.id, 255))
	case kindReturn:
		errs = append(errs, limit("id", r.id, lim.id), limit("fun", r.fun, lim.fun))
		if r.id == "" {
			errs = append(errs, fmt.Errorf("the return has no minion id: %w", ErrRefused))
		}
		fallthrough
	case kindLoad:
		errs = append(errs, limit("jid", r.jid, lim.jid))
	}
	most := s.d.maxText()
	if s.packetMax > 0 {
		most = min(most, s.packetMax-4096)
	}
	if n := max(len(r.ret), len(r.full)); n > most {
		errs = append(errs, fmt.Errorf("the JSON is %d bytes, past the %d the column or connection takes: %w", n, most, ErrRefused))
	}
	return errors.Join(errs...)
}

// refuse logs and counts a write that will not be made.
func (s *Store) refuse(r *record, err error) {
	s.refused.Add(1)
	switch r.kind {
	case kindEvent:
		s.log.Error(s.d.name()+" job cache: event not stored", "tag", r.id, logattr.Err, err)
	case kindLoad:
		s.log.Error(s.d.name()+" job cache: job load not stored", logattr.JID, r.jid, logattr.Err, err)
	default:
		s.log.Error(s.d.name()+" job cache: return not stored", logattr.JID, r.jid, "id", r.id, logattr.Fun, r.fun, logattr.Err, err)
	}
}

// Close writes out what the spool holds (for up to 15 s while the
// database answers; the rest stays on disk for the next start) and
// closes the connections.
func (s *Store) Close() error {
	s.once.Do(func() {
		if s.sp != nil {
			close(s.closing)
			select {
			case <-s.closed:
			case <-time.After(15 * time.Second):
				s.cancel()
				<-s.closed
			}
			s.cancel()
			if n := s.Pending(); n > 0 {
				s.log.Warn(s.d.name()+" job cache: writes kept on disk for the next start", "pending", n)
			}
			s.closeErr = s.sp.close()
		}
		if err := s.db.Close(); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}

type nopLogger struct{}

func (nopLogger) Info(string, ...any)  {}
func (nopLogger) Warn(string, ...any)  {}
func (nopLogger) Error(string, ...any) {}
