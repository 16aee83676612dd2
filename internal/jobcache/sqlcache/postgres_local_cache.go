package sqlcache

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// plcDialect is salt/returners/postgres_local_cache.py: PostgreSQL with
// text columns, a load spread over jids' columns as Python's str() of
// each value (arg as JSON), a return stored as
// {"return": str(return), "retcode", "success"} and success as a
// nullable boolean. It connects as pgjsonb does, with the options under
// master_job_cache.postgres.* (passwd, not pass).
//
// Where Brine differs from Salt's module: get_load gives arg decoded
// (Salt's leaves the JSON text, which its list_job then shows as a list
// of characters); a second load of a jid keeps the first instead of
// failing; keep_jobs deletes expired rows (Salt's clean_old_jobs does
// nothing; its get_jids only hides them), moving them to *_archive
// tables with archive_jobs; the btree index Salt puts on
// salt_events.data, which refuses an event past about 2.7 kB, is a hash
// index here.
type plcDialect struct{ pgDialect }

func (plcDialect) name() string { return "postgres_local_cache" }

// open is pgjsonb's connection, the password under passwd.
func (d plcDialect) open(o map[string]any) (*sql.DB, []string, error) {
	c := make(map[string]any, len(o)+1)
	for k, v := range o {
		c[k] = v
	}
	c["pass"] = o["passwd"]
	return d.pgDialect.open(c)
}

// schema is the module's documented DDL with IF NOT EXISTS; the index
// names are those PostgreSQL gives the DDL's unnamed indexes, so a
// database Salt's script made is used as it is.
func (plcDialect) schema() []string {
	return []string{
		"CREATE TABLE IF NOT EXISTS jids (jid varchar(20) PRIMARY KEY, started TIMESTAMP WITH TIME ZONE DEFAULT now(), tgt_type text NOT NULL, " +
			"cmd text NOT NULL, tgt text NOT NULL, kwargs text NOT NULL, ret text NOT NULL, username text NOT NULL, arg text NOT NULL, fun text NOT NULL)",
		"CREATE TABLE IF NOT EXISTS salt_returns (added TIMESTAMP WITH TIME ZONE DEFAULT now(), fun text NOT NULL, jid varchar(20) NOT NULL, " +
			"return text NOT NULL, id text NOT NULL, success boolean)",
		"CREATE INDEX IF NOT EXISTS salt_returns_added_idx ON salt_returns (added)",
		"CREATE INDEX IF NOT EXISTS salt_returns_id_idx ON salt_returns (id)",
		"CREATE INDEX IF NOT EXISTS salt_returns_jid_idx ON salt_returns (jid)",
		"CREATE INDEX IF NOT EXISTS salt_returns_fun_idx ON salt_returns (fun)",
		"CREATE TABLE IF NOT EXISTS salt_events (id SERIAL, tag text NOT NULL, data text NOT NULL, alter_time TIMESTAMP WITH TIME ZONE DEFAULT now(), master_id text NOT NULL)",
		"CREATE INDEX IF NOT EXISTS salt_events_tag_idx ON salt_events (tag)",
		"CREATE INDEX IF NOT EXISTS salt_events_data_idx ON salt_events USING hash (data)",
		"CREATE INDEX IF NOT EXISTS salt_events_id_idx ON salt_events (id)",
		"CREATE INDEX IF NOT EXISTS salt_events_master_id_idx ON salt_events (master_id)",
		"CREATE TABLE IF NOT EXISTS brine_spool (spool varchar(64) NOT NULL PRIMARY KEY, seq BIGINT NOT NULL)",
	}
}

// plcLoadCols are jids' columns after jid and started, in the order
// save_load writes and get_load reads them, with the load key of each.
var plcLoadCols = []struct{ col, key string }{
	{"tgt_type", "tgt_type"}, {"cmd", "cmd"}, {"tgt", "tgt"}, {"kwargs", "kwargs"}, {"ret", "ret"},
	{"username", "user"}, {"arg", "arg"}, {"fun", "fun"},
}

func (plcDialect) insertLoads(n int) string {
	return "INSERT INTO jids (jid, started, tgt_type, cmd, tgt, kwargs, ret, username, arg, fun) VALUES " +
		numbered(n, 10, "($%d, COALESCE($%d::timestamptz, now()), $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)") + " ON CONFLICT (jid) DO NOTHING"
}

func (plcDialect) insertReturns(n int) string {
	return "INSERT INTO salt_returns (fun, jid, return, id, success, added) VALUES " +
		numbered(n, 6, "($%d, $%d, $%d, $%d, $%d, to_timestamp($%d))")
}

func (plcDialect) insertEvents(n int) string {
	return "INSERT INTO salt_events (tag, data, master_id, alter_time) VALUES " + numbered(n, 4, "($%d, $%d, $%d, to_timestamp($%d))")
}

// loadArgs are save_load's values: the jid, its time (started; NULL,
// so now(), for a jid that is not a time), str() of each load value and
// the JSON of arg. A load that does not decode (never one this store
// spooled) is stored with only its jid's columns filled.
func (plcDialect) loadArgs(r *record) []any {
	load, _ := decodeMap(r.ret)
	args := []any{r.jid, nil}
	if t, ok := plcStarted(r.jid); ok {
		args[1] = t
	}
	for _, c := range plcLoadCols {
		v := load.Value(c.key)
		s := py.Str(v)
		if c.key == "arg" {
			s, _ = encode(v)
		}
		args = append(args, pgText(s))
	}
	return args
}

// plcStarted is salt.utils.jid.jid_to_time as a time, with the jid's
// microseconds.
func plcStarted(jid string) (time.Time, bool) {
	t, err := jobcache.JIDTime(jid)
	if err != nil || len(jid) < 20 {
		return time.Time{}, false
	}
	us, err := strconv.Atoi(jid[14:20])
	if err != nil {
		return time.Time{}, false
	}
	return t.Add(time.Duration(us) * time.Microsecond), true
}

// pgText is s as a text column takes it: valid UTF-8 (bad bytes as
// U+FFFD) without NUL, which PostgreSQL's text cannot hold.
func pgText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// returnTexts is returner's {"return": str(ret["return"]), "retcode",
// "success"} (retcode and success when the ret has them) as full, what
// get_jid reads, and the success JSON (null when absent: the column is
// NULL) as rtext.
func (plcDialect) returnTexts(ret *ordered.Map) (string, string, error) {
	job := ordered.FromPairs("return", py.Str(ret.Value("return")))
	for _, k := range []string{"retcode", "success"} {
		if v, ok := ret.Get(k); ok {
			job.Set(k, v)
		}
	}
	full, err := encode(job)
	if err != nil {
		return "", "", err
	}
	succ, err := encode(ret.Value("success"))
	return succ, full, err
}

// returnArgs: success is the ret's success when it is a bool, else NULL
// (psycopg2 would refuse a non-bool for a boolean column).
func (plcDialect) returnArgs(r *record) []any {
	var succ any
	if b, err := strconv.ParseBool(r.ret); err == nil {
		succ = b
	}
	return []any{r.fun, r.jid, r.full, r.id, succ, float64(r.at) / 1e6}
}

// limits: jid is varchar(20) (Salt's jids are 20 digits; unique_jid's
// longer ones do not fit Salt's schema either), id and fun are text.
func (plcDialect) limits() columnLimits { return columnLimits{jid: 20, id: 1 << 20, fun: 1 << 20} }

func (plcDialect) returnsColumn() string { return "return" }

// decodeReturn is get_jid's reading of a return: an old-format row
// that is not a dict with "return" becomes {"return": row}.
func (plcDialect) decodeReturn(text string) (*ordered.Map, error) {
	v, err := decodeStored(text)
	if err != nil {
		return nil, err
	}
	if m, ok := v.(*ordered.Map); ok && m.Has("return") {
		return m, nil
	}
	return ordered.FromPairs("return", v), nil
}

func (plcDialect) selectLoad() string {
	return "SELECT jid, tgt_type, cmd, tgt, kwargs, ret, username, arg, fun FROM jids WHERE jid = $1"
}

// selectJIDs is get_jids: only the jobs started within keep, as Salt's
// module filters them.
func (d plcDialect) selectJIDs(keep time.Duration) (string, []any) {
	q := "SELECT jid, tgt_type, cmd, tgt, kwargs, ret, username, arg, fun FROM jids"
	if keep > 0 {
		return q + " WHERE started > NOW() - make_interval(secs => $1) ORDER BY jid", []any{keep.Seconds()}
	}
	return q + " ORDER BY jid", nil
}

// scanLoad is _build_dict: the columns under the load's keys, arg
// decoded from its JSON (kept as text when it is not JSON).
func (plcDialect) scanLoad(sc scanner, _ loadDecoder) (string, *ordered.Map, error) {
	var jid string
	vals := make([]string, len(plcLoadCols))
	dest := []any{&jid}
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	if err := sc.Scan(dest...); err != nil {
		return "", nil, err
	}
	m := ordered.NewSize(len(plcLoadCols) + 1)
	m.Set("jid", jid)
	for i, c := range plcLoadCols {
		var v any = vals[i]
		if c.key == "arg" {
			if a, err := decodeStored(vals[i]); err == nil {
				v = a
			}
		}
		m.Set(c.key, v)
	}
	return jid, m, nil
}

// pendingLoad is a spooled load as get_load will read it once written.
func (d plcDialect) pendingLoad(r *record) (*ordered.Map, error) {
	args := d.loadArgs(r)
	vals := []any{r.jid}
	vals = append(vals, args[2:]...)
	_, m, err := d.scanLoad(valuesRow(vals), nil)
	return m, err
}

// valuesRow is a row of values already at hand.
type valuesRow []any

func (v valuesRow) Scan(dest ...any) error {
	if len(dest) != len(v) {
		return fmt.Errorf("scan %d values into %d", len(v), len(dest))
	}
	for i, d := range dest {
		p, ok := d.(*string)
		s, ok2 := v[i].(string)
		if !ok || !ok2 {
			return fmt.Errorf("scan value %d: not text", i)
		}
		*p = s
	}
	return nil
}

// purge deletes the jobs started, returns added and events altered
// before keep; with archive each table's rows go to its *_archive
// first.
func (d plcDialect) purge(ctx context.Context, tx *sql.Tx, keep time.Duration, archive bool) (int, error) {
	tables := []struct{ table, col string }{{"jids", "started"}, {"salt_returns", "added"}, {"salt_events", "alter_time"}}
	secs := keep.Seconds()
	n := 0
	for i, t := range tables {
		where := fmt.Sprintf("%s < NOW() - make_interval(secs => $1)", t.col)
		if archive {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s_archive (LIKE %s)", t.table, t.table)); err != nil {
				return 0, err
			}
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s_archive SELECT * FROM %s WHERE %s", t.table, t.table, where), secs); err != nil {
				return 0, err
			}
		}
		res, err := tx.ExecContext(ctx, fmt.Sprintf("DELETE FROM %s WHERE %s", t.table, where), secs)
		if err != nil {
			return 0, err
		}
		if i == 0 {
			c, _ := res.RowsAffected()
			n = int(c)
		}
	}
	return n, nil
}
