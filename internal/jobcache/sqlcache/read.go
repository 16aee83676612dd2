package sqlcache

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
)

// decodeStored reads a JSON document from a jids, salt_returns or
// salt_events column, written by Brine or by Salt.
func decodeStored(text string) (any, error) {
	return ordered.ParseJSON([]byte(text))
}

func decodeMap(text string) (*ordered.Map, error) {
	v, err := decodeStored(text)
	if err != nil {
		return nil, err
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("stored JSON is a %T, not an object", v)
	}
	return m, nil
}

// text is a column as text: jsonb comes back through ::text.
func (s *Store) text(col string) string {
	if s.d.name() == "pgjsonb" {
		return col + "::text"
	}
	return s.d.q(col)
}

// pendingOf is what the spool holds for jid of kind.
func (s *Store) pendingOf(kind, jid string) []*record {
	if s.sp == nil {
		return nil
	}
	return s.sp.pending(func(r *record) bool { return r.kind == kind && (jid == "" || r.jid == jid) })
}

// unreachable logs a read that fell back to the spool alone.
func (s *Store) unreachable(what string, err error) {
	s.log.Warn(s.d.name()+" job cache: the database did not answer; answering from the writes not yet sent", "read", what, logattr.Err, err)
}

// GetLoad is get_load: the load (with "Minions" when the publish saved
// them), from the spool while it still waits there.
func (s *Store) GetLoad(ctx context.Context, jid string) (*ordered.Map, error) {
	if p := s.pendingOf(kindLoad, jid); len(p) > 0 {
		return s.d.pendingLoad(p[len(p)-1])
	}
	_, m, err := s.d.scanLoad(s.db.QueryRowContext(ctx, s.d.selectLoad(), jid), decodeLoad)
	if err == sql.ErrNoRows {
		return nil, fmt.Errorf("load job %s: %w", jid, jobcache.ErrUnknownJob)
	}
	if err != nil {
		return nil, fmt.Errorf("load job %s: %w", jid, err)
	}
	return m, nil
}

// GetJID is get_jid: each minion's full_ret, rows in the database then
// the spool's, a later row of a minion replacing an earlier one as
// Salt's dict does.
func (s *Store) GetJID(ctx context.Context, jid string) (*ordered.Map, error) {
	out := ordered.New()
	q := fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s = %s", s.d.q("id"), s.text(s.d.returnsColumn()), s.d.q("salt_returns"), s.d.q("jid"), s.d.ph(1))
	if err := s.scanReturns(ctx, out, q, jid); err != nil {
		s.unreachable("get_jid", err)
	}
	for _, r := range s.pendingOf(kindReturn, jid) {
		if m, err := s.d.decodeReturn(r.full); err == nil {
			out.Set(r.id, m)
		}
	}
	return out, nil
}

// scanReturns adds (id, full_ret) rows to out; a row that does not
// decode is logged and skipped.
func (s *Store) scanReturns(ctx context.Context, out *ordered.Map, q string, args ...any) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, text string
		if err := rows.Scan(&id, &text); err != nil {
			return err
		}
		m, err := s.d.decodeReturn(text)
		if err != nil {
			s.log.Warn(s.d.name()+" job cache: a stored return does not decode", "id", id, logattr.Err, err)
			continue
		}
		out.Set(id, m)
	}
	return rows.Err()
}

// GetFun is get_fun: each minion's latest return of fun.
func (s *Store) GetFun(ctx context.Context, fun string) (*ordered.Map, error) {
	out := ordered.New()
	q := fmt.Sprintf("SELECT s.%[1]s, s.%[2]s FROM %[3]s s JOIN (SELECT %[1]s, MAX(%[4]s) AS mj FROM %[3]s WHERE %[5]s = %[6]s GROUP BY %[1]s) m "+
		"ON s.%[1]s = m.%[1]s AND s.%[4]s = m.mj WHERE s.%[5]s = %[7]s ORDER BY s.%[4]s",
		s.d.q("id"), s.text(s.d.returnsColumn()), s.d.q("salt_returns"), s.d.q("jid"), s.d.q("fun"), s.d.ph(1), s.d.ph(2))
	if err := s.scanReturns(ctx, out, q, fun, fun); err != nil {
		s.unreachable("get_fun", err)
	}
	for _, r := range s.pendingOf(kindReturn, "") {
		if r.fun == fun {
			if m, err := s.d.decodeReturn(r.full); err == nil {
				out.Set(r.id, m)
			}
		}
	}
	return out, nil
}

// decodedLoads keeps the loads get_jids decoded with their text, so
// that a later get_jids decodes only the loads whose text changed (an
// upsert) or that are new: the query still sends every load, but the
// decoding, most of get_jids' own work, is done once per load. It holds
// the jobs of the last get_jids only; the loads it hands out are
// shared and read-only.
type decodedLoads struct {
	mu sync.Mutex
	m  map[string]decodedLoad
}

type decodedLoad struct {
	text string
	load *ordered.Map
}

// decoder decodes through the kept loads, noting in seen what this
// get_jids read.
func (d *decodedLoads) decoder(seen map[string]decodedLoad) loadDecoder {
	d.mu.Lock()
	kept := d.m
	d.mu.Unlock()
	return func(jid, text string) (*ordered.Map, error) {
		if e, ok := kept[jid]; ok && e.text == text {
			seen[jid] = e
			return e.load, nil
		}
		m, err := decodeMap(text)
		if err == nil {
			seen[jid] = decodedLoad{text: text, load: m}
		}
		return m, err
	}
}

func (d *decodedLoads) replace(m map[string]decodedLoad) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.m = m
}

// GetJIDs is get_jids, oldest first. pgjsonb reads only the parts of
// each load format_job_instance shows.
func (s *Store) GetJIDs(ctx context.Context) ([]jobcache.Job, error) {
	byJID := map[string]*ordered.Map{}
	q, args := s.d.selectJIDs(s.cfg.KeepJobs)
	rows, err := s.db.QueryContext(ctx, q, args...)
	seen := map[string]decodedLoad{}
	if err == nil {
		defer rows.Close()
		dec := s.jids.decoder(seen)
		for rows.Next() {
			jid, m, err := s.d.scanLoad(rows, dec)
			if err == nil {
				byJID[jid] = m
			} else if jid == "" { // the row did not scan
				return nil, fmt.Errorf("get_jids: %w", err)
			} else {
				s.log.Warn(s.d.name()+" job cache: a stored load does not decode", logattr.JID, jid, logattr.Err, err)
			}
		}
		err = rows.Err()
	}
	if err != nil {
		s.unreachable("get_jids", err)
	} else {
		s.jids.replace(seen)
	}
	for _, r := range s.pendingOf(kindLoad, "") {
		if m, err := s.d.pendingLoad(r); err == nil {
			byJID[r.jid] = m
		}
	}
	out := make([]jobcache.Job, 0, len(byJID))
	for jid, m := range byJID {
		out = append(out, jobcache.Job{JID: jid, Load: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].JID < out[j].JID })
	return out, nil
}

// GetMinions is get_minions: every id with a return.
func (s *Store) GetMinions(ctx context.Context) ([]string, error) {
	var out []string
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf("SELECT DISTINCT %s FROM %s", s.d.q("id"), s.d.q("salt_returns")))
	if err != nil {
		return nil, fmt.Errorf("get_minions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("get_minions: %w", err)
		}
		out = append(out, id)
	}
	for _, r := range s.pendingOf(kindReturn, "") {
		if !slices.Contains(out, r.id) {
			out = append(out, r.id)
		}
	}
	sort.Strings(out)
	return out, rows.Err()
}

// CleanOldJobs is clean_old_jobs: with archive_jobs the old rows move
// to jids_archive, salt_returns_archive and salt_events_archive first.
// Masters sharing the database take turns through a lock (an advisory
// lock, GET_LOCK on MySQL); one that finds it held leaves the work to
// the holder and reports 0.
func (s *Store) CleanOldJobs(ctx context.Context, keep time.Duration) (int, error) {
	if keep <= 0 {
		return 0, nil
	}
	if err := s.prepare(ctx); err != nil {
		return 0, fmt.Errorf("clean old jobs: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("clean old jobs: %w", err)
	}
	defer tx.Rollback()
	got, err := s.d.tryLock(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("clean old jobs: %w", err)
	}
	if !got {
		return 0, nil
	}
	n, err := s.d.purge(ctx, tx, keep, s.cfg.ArchiveJobs)
	s.d.unlock(ctx, tx) // GET_LOCK belongs to the connection, not the transaction
	if err != nil {
		return 0, fmt.Errorf("clean old jobs: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("clean old jobs: %w", err)
	}
	return n, nil
}
