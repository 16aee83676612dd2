package sqlcache

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/brinesalt/brine/internal/ordered"
)

// dialect is what differs between the MySQL and the PostgreSQL stores:
// connecting, the SQL text (always with placeholders), the column
// limits and which errors are the data's fault.
type dialect interface {
	name() string
	open(o map[string]any) (*sql.DB, []string, error)
	// ph is the n-th (1-based) placeholder.
	ph(n int) string
	// q quotes an identifier.
	q(ident string) string
	schema() []string
	insertLoads(n int) string
	insertReturns(n int) string
	insertEvents(n int) string
	// loadArgs are one jids row's values, for insertLoads.
	loadArgs(r *record) []any
	// returnTexts are a return's two texts as a record keeps them (ret
	// and full); full is what get_jid reads back.
	returnTexts(ret *ordered.Map) (rtext, full string, err error)
	// returnArgs are one salt_returns row's values, for insertReturns.
	returnArgs(r *record) []any
	// limits are the characters the jid, id and fun columns hold.
	limits() columnLimits
	// returnsColumn is the salt_returns column get_jid reads.
	returnsColumn() string
	// decodeReturn reads that column back into a minion's entry.
	decodeReturn(text string) (*ordered.Map, error)
	// selectLoad is get_load's query of one jid (its one placeholder);
	// selectJIDs get_jids' query, with its arguments, of the jobs keep
	// (keep_jobs_seconds, 0 for all) has not expired; scanLoad reads a
	// row of either, pendingLoad a load still in the spool, into the
	// load get_load answers.
	selectLoad() string
	selectJIDs(keep time.Duration) (string, []any)
	scanLoad(sc scanner, dec loadDecoder) (jid string, load *ordered.Map, err error)
	pendingLoad(r *record) (*ordered.Map, error)
	// maxText is the largest JSON text a column takes.
	maxText() int
	// purge deletes what is older than keep; archive copies it first.
	purge(ctx context.Context, tx *sql.Tx, keep time.Duration, archive bool) (int, error)
	// tryLock takes the transaction-wide clean-up lock, false when
	// another master holds it.
	tryLock(ctx context.Context, tx *sql.Tx) (bool, error)
	unlock(ctx context.Context, tx *sql.Tx)
	// dataError reports an error caused by one row's data (too long, bad
	// encoding), which retrying the same row cannot fix.
	dataError(err error) bool
}

// loadDecoder decodes a jid's load stored as one JSON text.
type loadDecoder func(jid, text string) (*ordered.Map, error)

// decodeLoad is a loadDecoder that keeps nothing.
func decodeLoad(_, text string) (*ordered.Map, error) { return decodeMap(text) }

// scanner is a row of a query.
type scanner interface{ Scan(dest ...any) error }

// columnLimits are the characters Salt's varchar columns hold.
type columnLimits struct{ jid, id, fun int }

// jsonDoc is what mysql and pgjsonb share: a load is one JSON document
// in jids.load; a return the JSON of its return and of the whole ret
// dict, in salt_returns.return and full_ret.
type jsonDoc struct{}

func (jsonDoc) loadArgs(r *record) []any { return []any{r.jid, r.ret} }

func (jsonDoc) returnTexts(ret *ordered.Map) (string, string, error) { return encodeReturn(ret) }

func (jsonDoc) limits() columnLimits { return columnLimits{jid: 255, id: 255, fun: 50} }

func (jsonDoc) returnsColumn() string { return "full_ret" }

func (jsonDoc) decodeReturn(text string) (*ordered.Map, error) { return decodeMap(text) }

func (jsonDoc) scanLoad(sc scanner, dec loadDecoder) (string, *ordered.Map, error) {
	var jid, text string
	if err := sc.Scan(&jid, &text); err != nil {
		return "", nil, err
	}
	m, err := dec(jid, text)
	return jid, m, err
}

func (jsonDoc) pendingLoad(r *record) (*ordered.Map, error) { return decodeMap(r.ret) }

// strOpt is an option as text, "" when unset or None.
func strOpt(o map[string]any, k string) string {
	v, ok := o[k]
	if !ok || v == nil {
		return ""
	}
	s := fmt.Sprint(v)
	if strings.EqualFold(s, "none") {
		return "" // Salt's _get_options turns 'None' into None
	}
	return s
}

func portOpt(o map[string]any, def int) (int, error) {
	s := strOpt(o, "port")
	if s == "" {
		return def, nil
	}
	p, err := strconv.Atoi(s)
	if err != nil || p <= 0 || p > 65535 {
		return 0, fmt.Errorf("port %q is not a port number", s)
	}
	return p, nil
}

// mysqlDialect is salt/returners/mysql.py.
type mysqlDialect struct{ jsonDoc }

func (mysqlDialect) name() string      { return "mysql" }
func (mysqlDialect) ph(int) string     { return "?" }
func (mysqlDialect) q(s string) string { return "`" + s + "`" }
func (mysqlDialect) maxText() int      { return 1<<24 - 1 } // mediumtext

// open connects as mysql.host/user/pass/db/port with ssl_ca, ssl_cert
// and ssl_key; a host that is a path is a unix socket. The password goes
// to the driver in its Config, never into a DSN string.
func (mysqlDialect) open(o map[string]any) (*sql.DB, []string, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = strOpt(o, "user"), strOpt(o, "pass"), strOpt(o, "db")
	port, err := portOpt(o, 3306)
	if err != nil {
		return nil, nil, err
	}
	host := strOpt(o, "host")
	if strings.HasPrefix(host, "/") {
		cfg.Net, cfg.Addr = "unix", host
	} else {
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(port))
	}
	cfg.InterpolateParams = true // one round trip per statement; values are still escaped by the driver
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 10*time.Second, 60*time.Second, 60*time.Second
	cfg.Logger = &mysql.NopLogger{}
	if ca, cert, key := strOpt(o, "ssl_ca"), strOpt(o, "ssl_cert"), strOpt(o, "ssl_key"); ca != "" || cert != "" || key != "" {
		t, err := tlsConfig(ca, cert, key, host)
		if err != nil {
			return nil, nil, err
		}
		cfg.TLS = t
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	return sql.OpenDB(c), nil, nil
}

// tlsConfig is MySQLdb's ssl={ca, cert, key}: the server is verified
// against ca when given, and cert/key are the client's.
func tlsConfig(ca, cert, key, host string) (*tls.Config, error) {
	t := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("ssl_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ssl_ca %s: no certificate in it", ca)
		}
		t.RootCAs = pool
	} else {
		// MySQLdb with only a client certificate encrypts without
		// verifying the server.
		t.InsecureSkipVerify = true
	}
	if cert != "" || key != "" {
		kp, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("ssl_cert/ssl_key: %w", err)
		}
		t.Certificates = []tls.Certificate{kp}
	}
	return t, nil
}

// schema is Salt's documented tables (salt/returners/mysql.py), made
// when absent, and brine_spool, where each spool's last written record
// is kept.
func (mysqlDialect) schema() []string {
	return []string{
		"CREATE TABLE IF NOT EXISTS `jids` (`jid` varchar(255) NOT NULL, `load` mediumtext NOT NULL, UNIQUE KEY `jid` (`jid`)) ENGINE=InnoDB DEFAULT CHARSET=utf8",
		"CREATE TABLE IF NOT EXISTS `salt_returns` (`fun` varchar(50) NOT NULL, `jid` varchar(255) NOT NULL, `return` mediumtext NOT NULL, " +
			"`id` varchar(255) NOT NULL, `success` varchar(10) NOT NULL, `full_ret` mediumtext NOT NULL, `alter_time` TIMESTAMP DEFAULT CURRENT_TIMESTAMP, " +
			"KEY `id` (`id`), KEY `jid` (`jid`), KEY `fun` (`fun`)) ENGINE=InnoDB DEFAULT CHARSET=utf8",
		"CREATE TABLE IF NOT EXISTS `salt_events` (`id` BIGINT NOT NULL AUTO_INCREMENT, `tag` varchar(255) NOT NULL, `data` mediumtext NOT NULL, " +
			"`alter_time` TIMESTAMP DEFAULT CURRENT_TIMESTAMP, `master_id` varchar(255) NOT NULL, PRIMARY KEY (`id`), KEY `tag` (`tag`)) ENGINE=InnoDB DEFAULT CHARSET=utf8",
		"CREATE TABLE IF NOT EXISTS `brine_spool` (`spool` varchar(64) NOT NULL PRIMARY KEY, `seq` BIGINT NOT NULL) ENGINE=InnoDB",
	}
}

// Salt's mysql save_load keeps the first load of a jid (it ignores the
// IntegrityError of a second).
func (mysqlDialect) insertLoads(n int) string {
	return "INSERT INTO `jids` (`jid`, `load`) VALUES " + rows(n, "(?, ?)") + " ON DUPLICATE KEY UPDATE `jid` = `jid`"
}

func (mysqlDialect) insertReturns(n int) string {
	return "INSERT INTO `salt_returns` (`fun`, `jid`, `return`, `id`, `success`, `full_ret`, `alter_time`) VALUES " +
		rows(n, "(?, ?, ?, ?, ?, ?, FROM_UNIXTIME(?))")
}

func (mysqlDialect) insertEvents(n int) string {
	return "INSERT INTO `salt_events` (`tag`, `data`, `master_id`, `alter_time`) VALUES " + rows(n, "(?, ?, ?, FROM_UNIXTIME(?))")
}

// returnArgs write success as MySQLdb writes a Python bool into
// varchar(10).
func (mysqlDialect) returnArgs(r *record) []any {
	succ := "0"
	if r.succ {
		succ = "1"
	}
	return []any{r.fun, r.jid, r.ret, r.id, succ, r.full, float64(r.at) / 1e6}
}

func (mysqlDialect) selectLoad() string { return "SELECT `jid`, `load` FROM `jids` WHERE `jid` = ?" }

// selectJIDs reads the loads without a runner job's return and the
// targeted minions (see pgDialect.selectJIDs); a load that is not JSON
// the server can read comes whole.
func (mysqlDialect) selectJIDs(time.Duration) (string, []any) {
	return "SELECT `jid`, COALESCE(JSON_REMOVE(`load`, '$.return', '$.Minions'), `load`) FROM `jids` ORDER BY `jid`", nil
}

func (d mysqlDialect) purge(ctx context.Context, tx *sql.Tx, keep time.Duration, archive bool) (int, error) {
	var stamp string
	if err := tx.QueryRowContext(ctx, "SELECT CAST(DATE_SUB(NOW(), INTERVAL ? SECOND) AS CHAR)", int64(keep/time.Second)).Scan(&stamp); err != nil {
		return 0, err
	}
	return purgeWith(ctx, tx, d, stamp, archive, "CREATE TABLE IF NOT EXISTS `%s_archive` LIKE `%s`")
}

func (mysqlDialect) tryLock(ctx context.Context, tx *sql.Tx) (bool, error) {
	var got sql.NullInt64
	err := tx.QueryRowContext(ctx, "SELECT GET_LOCK('brine.clean_old_jobs', 0)").Scan(&got)
	return got.Valid && got.Int64 == 1, err
}

func (mysqlDialect) unlock(ctx context.Context, tx *sql.Tx) {
	_, _ = tx.ExecContext(ctx, "SELECT RELEASE_LOCK('brine.clean_old_jobs')")
}

// dataError: SQLSTATE class 22 (data exception) and 23 (integrity), and
// the server's refusals of one over-long or badly encoded value.
func (mysqlDialect) dataError(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	st := string(me.SQLState[:])
	return strings.HasPrefix(st, "22") || strings.HasPrefix(st, "23") || me.Number == 1366 || me.Number == 1406
}

// pgDialect is salt/returners/pgjsonb.py.
type pgDialect struct{ jsonDoc }

func (pgDialect) name() string      { return "pgjsonb" }
func (pgDialect) ph(n int) string   { return "$" + strconv.Itoa(n) }
func (pgDialect) q(s string) string { return `"` + s + `"` }
func (pgDialect) maxText() int      { return 255 << 20 } // jsonb's limit is about 255 MiB

// open connects as returner.pgjsonb.host/user/pass/db/port with
// sslmode, sslcert, sslkey and sslrootcert (libpq's meanings); sslcrl is
// not something pgx reads, and is reported. The password is set on the
// parsed config, never written into a connection string.
func (pgDialect) open(o map[string]any) (*sql.DB, []string, error) {
	port, err := portOpt(o, 5432)
	if err != nil {
		return nil, nil, err
	}
	var kv []string
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, k+"="+pgQuote(v))
		}
	}
	add("host", strOpt(o, "host"))
	add("port", strconv.Itoa(port))
	add("dbname", strOpt(o, "db"))
	add("user", strOpt(o, "user"))
	add("connect_timeout", "10")
	for _, k := range []string{"sslmode", "sslcert", "sslkey", "sslrootcert"} {
		add(k, strOpt(o, k))
	}
	var warn []string
	if strOpt(o, "sslcrl") != "" {
		warn = append(warn, "sslcrl is not supported by Brine's PostgreSQL driver; the CRL is not checked")
	}
	cfg, err := pgx.ParseConfig(strings.Join(kv, " "))
	if err != nil {
		return nil, nil, errors.New(scrub(err.Error(), strOpt(o, "pass")))
	}
	if p := strOpt(o, "pass"); p != "" {
		cfg.Password = p
	}
	return stdlib.OpenDB(*cfg), warn, nil
}

// pgQuote quotes a libpq keyword/value.
func pgQuote(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// scrub keeps a secret out of an error that may quote the input.
func scrub(msg, secret string) string {
	if secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "*****")
}

// schema is Salt's documented pgjsonb tables and indexes, made when
// absent, and brine_spool.
func (pgDialect) schema() []string {
	return []string{
		"CREATE TABLE IF NOT EXISTS jids (jid varchar(255) NOT NULL primary key, load jsonb NOT NULL)",
		"CREATE INDEX IF NOT EXISTS idx_jids_jsonb on jids USING gin (load) WITH (fastupdate=on)",
		"CREATE TABLE IF NOT EXISTS salt_returns (fun varchar(50) NOT NULL, jid varchar(255) NOT NULL, return jsonb NOT NULL, " +
			"id varchar(255) NOT NULL, success varchar(10) NOT NULL, full_ret jsonb NOT NULL, alter_time TIMESTAMP WITH TIME ZONE DEFAULT NOW())",
		"CREATE INDEX IF NOT EXISTS idx_salt_returns_id ON salt_returns (id)",
		"CREATE INDEX IF NOT EXISTS idx_salt_returns_jid ON salt_returns (jid)",
		"CREATE INDEX IF NOT EXISTS idx_salt_returns_fun ON salt_returns (fun)",
		"CREATE INDEX IF NOT EXISTS idx_salt_returns_return ON salt_returns USING gin (return) with (fastupdate=on)",
		"CREATE INDEX IF NOT EXISTS idx_salt_returns_full_ret ON salt_returns USING gin (full_ret) with (fastupdate=on)",
		"CREATE SEQUENCE IF NOT EXISTS seq_salt_events_id",
		"CREATE TABLE IF NOT EXISTS salt_events (id BIGINT NOT NULL UNIQUE DEFAULT nextval('seq_salt_events_id'), tag varchar(255) NOT NULL, " +
			"data jsonb NOT NULL, alter_time TIMESTAMP WITH TIME ZONE DEFAULT NOW(), master_id varchar(255) NOT NULL)",
		"CREATE INDEX IF NOT EXISTS idx_salt_events_tag on salt_events (tag)",
		"CREATE INDEX IF NOT EXISTS idx_salt_events_data ON salt_events USING gin (data) with (fastupdate=on)",
		"CREATE TABLE IF NOT EXISTS brine_spool (spool varchar(64) NOT NULL PRIMARY KEY, seq BIGINT NOT NULL)",
	}
}

// Salt's pgjsonb save_load replaces the load of a jid it has
// (ON CONFLICT … DO UPDATE, PostgreSQL 9.5 and later).
func (pgDialect) insertLoads(n int) string {
	return "INSERT INTO jids (jid, load) VALUES " + numbered(n, 2, "($%d, $%d::jsonb)") + " ON CONFLICT (jid) DO UPDATE SET load = EXCLUDED.load"
}

func (pgDialect) insertReturns(n int) string {
	return "INSERT INTO salt_returns (fun, jid, return, id, success, full_ret, alter_time) VALUES " +
		numbered(n, 7, "($%d, $%d, $%d::jsonb, $%d, $%d, $%d::jsonb, to_timestamp($%d))")
}

func (pgDialect) insertEvents(n int) string {
	return "INSERT INTO salt_events (tag, data, master_id, alter_time) VALUES " + numbered(n, 4, "($%d, $%d::jsonb, $%d, to_timestamp($%d))")
}

// returnArgs write success as psycopg2 writes a Python bool into
// varchar(10).
func (pgDialect) returnArgs(r *record) []any {
	return []any{r.fun, r.jid, r.ret, r.id, strconv.FormatBool(r.succ), r.full, float64(r.at) / 1e6}
}

func (pgDialect) selectLoad() string { return "SELECT jid, load::text FROM jids WHERE jid = $1" }

// selectJIDs reads the loads without what format_job_instance does not
// show and can be large: a runner job's return (a jobs.list_jobs answer
// holds every job) and the targeted minions. Removing keys from a jsonb
// costs PostgreSQL less than building a smaller one from its parts.
func (pgDialect) selectJIDs(time.Duration) (string, []any) {
	return "SELECT jid, (load - 'return' - 'Minions')::text FROM jids ORDER BY jid", nil
}

func (d pgDialect) purge(ctx context.Context, tx *sql.Tx, keep time.Duration, archive bool) (int, error) {
	var stamp string
	if err := tx.QueryRowContext(ctx, "SELECT (NOW() - make_interval(secs => $1))::text", float64(keep/time.Second)).Scan(&stamp); err != nil {
		return 0, err
	}
	return purgeWith(ctx, tx, d, stamp, archive, "CREATE TABLE IF NOT EXISTS %s_archive (LIKE %s)")
}

func (pgDialect) tryLock(ctx context.Context, tx *sql.Tx) (bool, error) {
	var got bool
	err := tx.QueryRowContext(ctx, "SELECT pg_try_advisory_xact_lock(hashtext('brine.clean_old_jobs'))").Scan(&got)
	return got, err
}

func (pgDialect) unlock(context.Context, *sql.Tx) {} // a transaction lock ends with it

// dataError: SQLSTATE class 22 (data exception), 23 (integrity) and 54
// (a value past a program limit).
func (pgDialect) dataError(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "23") || strings.HasPrefix(pe.Code, "54")
}

// purgeWith is _purge_jobs (and _archive_jobs first when archive is
// set): the jobs with returns older than stamp, those returns and older
// events; and, where Salt leaves them for ever, jobs that never had a
// return and whose jid is older than stamp.
func purgeWith(ctx context.Context, tx *sql.Tx, d dialect, stamp string, archive bool, createLike string) (int, error) {
	q := d.q
	p := d.ph(1)
	jidStamp := strings.NewReplacer("-", "", " ", "", ":", "", ".", "").Replace(stamp)
	if len(jidStamp) > 20 {
		jidStamp = jidStamp[:20]
	}
	oldJobs := fmt.Sprintf("SELECT DISTINCT %s FROM %s WHERE %s < %s", q("jid"), q("salt_returns"), q("alter_time"), p)
	orphans := fmt.Sprintf("%s < %s AND NOT EXISTS (SELECT 1 FROM %s r WHERE r.%s = %s.%s)", q("jid"), d.ph(2),
		q("salt_returns"), q("jid"), q("jids"), q("jid"))
	if archive {
		for _, t := range []string{"jids", "salt_returns", "salt_events"} {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(createLike, t, t)); err != nil {
				return 0, err
			}
		}
		steps := []struct {
			sql  string
			args []any
		}{
			{fmt.Sprintf("INSERT INTO %s SELECT * FROM %s WHERE %s IN (%s) OR (%s)", q("jids_archive"), q("jids"), q("jid"), oldJobs, orphans), []any{stamp, jidStamp}},
			{fmt.Sprintf("INSERT INTO %s SELECT * FROM %s WHERE %s < %s", q("salt_returns_archive"), q("salt_returns"), q("alter_time"), p), []any{stamp}},
			{fmt.Sprintf("INSERT INTO %s SELECT * FROM %s WHERE %s < %s", q("salt_events_archive"), q("salt_events"), q("alter_time"), p), []any{stamp}},
		}
		for _, s := range steps {
			if _, err := tx.ExecContext(ctx, s.sql, s.args...); err != nil {
				return 0, err
			}
		}
	}
	res, err := tx.ExecContext(ctx, fmt.Sprintf("DELETE FROM %s WHERE %s IN (%s) OR (%s)", q("jids"), q("jid"), oldJobs, orphans), stamp, jidStamp)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	for _, t := range []string{"salt_returns", "salt_events"} {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("DELETE FROM %s WHERE %s < %s", q(t), q("alter_time"), p), stamp); err != nil {
			return 0, err
		}
	}
	return int(n), nil
}

// rows is n copies of one row's placeholders.
func rows(n int, one string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return b.String()
}

// numbered is n rows of k numbered placeholders each.
func numbered(n, k int, format string) string {
	var b strings.Builder
	args := make([]any, k)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		for j := range k {
			args[j] = i*k + j + 1
		}
		fmt.Fprintf(&b, format, args...)
	}
	return b.String()
}
