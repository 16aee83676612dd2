package sqlcache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
)

// run is the writer: it sends the spool's records to the database in
// batches, oldest first, until the store closes. When the database is
// away it says so once, waits (1 s, doubling to 10 s) and tries again;
// nothing leaves the spool before the database has it.
func (s *Store) run(ctx context.Context) {
	defer close(s.closed)
	backoff := time.Second
	wait := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-s.closing:
			return false
		case <-time.After(backoff):
			backoff = min(backoff*2, 10*time.Second)
			return true
		}
	}
	for {
		if err := s.prepare(ctx); err != nil {
			s.noteDown(err)
			if !wait() {
				return
			}
			continue
		}
		batch := s.sp.peek(batchRows, batchBytes)
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-s.closing:
				return
			case <-s.sp.notify:
			}
			continue
		}
		if err := s.writeBatch(ctx, batch); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.noteDown(err)
			if !wait() {
				return
			}
			continue
		}
		s.noteUp()
		backoff = time.Second
	}
}

// noteDown logs the first failure of a run of them.
func (s *Store) noteDown(err error) {
	if s.down.CompareAndSwap(false, true) {
		n := s.Pending()
		s.log.Error(s.d.name()+" job cache: the database is unreachable; writes wait on disk until it is back", "pending", n, logattr.Err, err)
	}
}

func (s *Store) noteUp() {
	if s.down.CompareAndSwap(true, false) {
		s.log.Info(s.d.name() + " job cache: the database is back; the writes kept on disk are going in")
	}
}

// prepare makes Salt's tables where they are missing, registers the
// spool in brine_spool and drops from it what the database already
// has (a crash after a commit and before the spool heard of it).
func (s *Store) prepare(ctx context.Context) error {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if s.prepared {
		return nil
	}
	if err := s.ensureSchema(ctx); err != nil {
		return err
	}
	if s.d.name() == "mysql" {
		var n int
		if err := s.db.QueryRowContext(ctx, "SELECT @@max_allowed_packet").Scan(&n); err == nil {
			s.packetMax = n
		}
	}
	if s.sp != nil {
		seq, err := s.spoolSeq(ctx)
		if err != nil {
			return err
		}
		s.sp.commit(seq)
		s.sp.mu.Lock()
		s.sp.next = max(s.sp.next, seq+1)
		s.sp.mu.Unlock()
	}
	s.prepared = true
	return nil
}

// ensureSchema runs Salt's CREATE … IF NOT EXISTS statements; a user
// who may not create tables is fine as long as they exist.
func (s *Store) ensureSchema(ctx context.Context) error {
	var firstErr error
	for _, stmt := range s.d.schema() {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		return nil
	}
	for _, t := range []string{"jids", "salt_returns", "salt_events", "brine_spool"} {
		if _, err := s.db.ExecContext(ctx, "SELECT 1 FROM "+s.d.q(t)+" WHERE 1 = 0"); err != nil {
			return fmt.Errorf("create the job cache tables: %w", firstErr)
		}
	}
	return nil
}

func (s *Store) spoolSeq(ctx context.Context) (uint64, error) {
	var seq int64
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s = %s", s.d.q("seq"), s.d.q("brine_spool"), s.d.q("spool"), s.d.ph(1))
	err := s.db.QueryRowContext(ctx, q, s.sp.id).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = s.db.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (%s, %s) VALUES (%s, 0)", s.d.q("brine_spool"), s.d.q("spool"), s.d.q("seq"), s.d.ph(1)), s.sp.id)
		return 0, err
	}
	return uint64(seq), err
}

// writeBatch writes records in one transaction with the spool's new
// position. A batch the database refuses because of one row's data is
// written row by row, and the rows it still refuses are logged and
// skipped, so one bad return never loses the others.
func (s *Store) writeBatch(ctx context.Context, batch []*record) error {
	err := s.tx(ctx, batch, batch[len(batch)-1].seq)
	if err == nil {
		s.written.Add(int64(len(batch)))
		s.sp.commit(batch[len(batch)-1].seq)
		return nil
	}
	if !s.rowsAtFault(ctx, err) {
		return err
	}
	for _, r := range batch {
		if err := s.writeOne(ctx, r); err != nil {
			return err
		}
		s.sp.commit(r.seq)
	}
	return nil
}

// rowsAtFault reports whether err is the data's fault rather than the
// database's absence: a data error, or any error while the database
// still answers a ping (a value past max_allowed_packet drops the
// connection).
func (s *Store) rowsAtFault(ctx context.Context, err error) bool {
	if s.d.dataError(err) {
		return true
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return s.db.PingContext(pctx) == nil
}

// writeOne writes one record (after clearing what jsonb cannot hold,
// when that was the trouble), or refuses it and moves the spool past
// it.
func (s *Store) writeOne(ctx context.Context, r *record) error {
	err := s.tx(ctx, []*record{r}, r.seq)
	if err != nil && s.d.name() == "pgjsonb" && s.rowsAtFault(ctx, err) && (strings.Contains(r.ret, `\u0000`) || strings.Contains(r.full, `\u0000`)) {
		c := *r
		c.ret, c.full = clearNUL(r.ret), clearNUL(r.full)
		s.log.Warn("pgjsonb job cache: NUL characters (which jsonb cannot hold) stored as U+FFFD", logattr.JID, r.jid, "id", r.id)
		err = s.tx(ctx, []*record{&c}, r.seq)
	}
	if err == nil {
		s.written.Add(1)
		return nil
	}
	if !s.rowsAtFault(ctx, err) {
		return err
	}
	s.refuse(r, fmt.Errorf("%w: %w", ErrRefused, err))
	if s.sp == nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return s.tx(ctx, nil, r.seq)
}

// clearNUL replaces the JSON escape \u0000 with \ufffd, minding
// escaped backslashes.
func clearNUL(j string) string {
	var b strings.Builder
	for i := 0; i < len(j); i++ {
		if j[i] == '\\' && i+1 < len(j) {
			if strings.HasPrefix(j[i:], `\u0000`) {
				b.WriteString(`\ufffd`)
				i += 5
				continue
			}
			b.WriteString(j[i : i+2])
			i++
			continue
		}
		b.WriteByte(j[i])
	}
	return b.String()
}

// writeDirect writes records at once (a minion-side returner): in one
// transaction, or row by row when one row's data is refused.
func (s *Store) writeDirect(ctx context.Context, recs []*record) error {
	if err := s.prepare(ctx); err != nil {
		return fmt.Errorf("%s returner could not connect to database: %w", s.d.name(), err)
	}
	err := s.tx(ctx, recs, 0)
	if err == nil {
		s.written.Add(int64(len(recs)))
		return nil
	}
	if !s.rowsAtFault(ctx, err) {
		return fmt.Errorf("%s returner: %w", s.d.name(), err)
	}
	var errs []error
	for _, r := range recs {
		if err := s.writeOne(ctx, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// tx inserts the records and, for a spooled store, sets the spool's
// position to seq, all in one transaction.
func (s *Store) tx(ctx context.Context, recs []*record, seq uint64) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var loads, rets, events []*record
	for _, r := range recs {
		switch r.kind {
		case kindLoad:
			loads = append(loads, r)
		case kindReturn:
			rets = append(rets, r)
		case kindEvent:
			events = append(events, r)
		}
	}
	if err := s.insertLoads(ctx, tx, loads); err != nil {
		return err
	}
	if len(rets) > 0 {
		var args []any
		for _, r := range rets {
			args = append(args, s.d.returnArgs(r)...)
		}
		if _, err := tx.ExecContext(ctx, s.d.insertReturns(len(rets)), args...); err != nil {
			return err
		}
	}
	if len(events) > 0 {
		args := make([]any, 0, 4*len(events))
		for _, r := range events {
			args = append(args, r.id, r.ret, s.cfg.MasterID, float64(r.at)/1e6)
		}
		if _, err := tx.ExecContext(ctx, s.d.insertEvents(len(events)), args...); err != nil {
			return err
		}
	}
	if s.sp != nil {
		q := fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s = %s", s.d.q("brine_spool"), s.d.q("seq"), s.d.ph(1), s.d.q("spool"), s.d.ph(2))
		if _, err := tx.ExecContext(ctx, q, int64(seq), s.sp.id); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// insertLoads writes loads, one row per jid: an upsert may not touch a
// row twice in one statement, so the last load of a jid in the batch
// is the one sent (PostgreSQL keeps the last, as Salt's pgjsonb does;
// MySQL the first one it ever had, as Salt's mysql does).
func (s *Store) insertLoads(ctx context.Context, tx *sql.Tx, loads []*record) error {
	if len(loads) == 0 {
		return nil
	}
	last := map[string]int{}
	for i, r := range loads {
		last[r.jid] = i
	}
	var args []any
	for i, r := range loads {
		if last[r.jid] == i {
			args = append(args, s.d.loadArgs(r)...)
		}
	}
	_, err := tx.ExecContext(ctx, s.d.insertLoads(len(last)), args...)
	return err
}
