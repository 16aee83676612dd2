package config

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// Minion is the minion configuration salt-minion runs with
// (salt/config/__init__.py DEFAULT_MINION_OPTS).
type Minion struct {
	// Dir is the configuration directory (-c); File the main file read.
	Dir, File string

	// Masters lists the master addresses (master: a string or a list).
	Masters     []string
	ID          string
	MasterPort  int // master_port: the request port, 4506
	PublishPort int // publish_port, 4505
	RootDir     string
	PKIDir      string
	CacheDir    string
	Grains      *ordered.Map
	// AcceptanceWaitTime is how long a pending minion waits between
	// sign-in attempts, growing to AcceptanceWaitTimeMax when set.
	AcceptanceWaitTime    time.Duration
	AcceptanceWaitTimeMax time.Duration
	RandomReauthDelay     time.Duration
	ReconDefault          time.Duration
	ReconMax              time.Duration
	ReconRandomize        bool
	MasterFinger          string
	AuthTimeout           time.Duration
	ReturnRetryTimer      time.Duration
	ReturnRetryTimerMax   time.Duration
	ZMQFiltering          bool
	// SignPubMessages is sign_pub_messages: a publication without the
	// master's signature is refused. Salt's minion defaults to False
	// and then checks no signature at all; Brine's defaults to True
	// and checks every signature a publication carries either way, so
	// only an explicit False lets unsigned publications in (a master
	// with sign_pub_messages: False).
	SignPubMessages bool
	KeySize         int
	OpenMode        bool
	// GrainsRefreshEvery is grains_refresh_every (minutes in the file):
	// how often the running minion gathers its grains again and, when
	// they changed, refreshes its pillar so the master sees them; 0 is
	// never.
	GrainsRefreshEvery time.Duration
	// GrainsRefreshPreExec is grains_refresh_pre_exec: gather the
	// grains again before every job.
	GrainsRefreshPreExec bool

	// The options of a minion with several masters (hot: master_type
	// str with a list; failover) and of master key signing
	// (doc/topics/tutorials/multimaster.rst, multimaster_pki.rst).
	// MasterType is master_type: "str" (one master, or hot multi-master
	// with a list), "failover", or "func"/"disable", which Brine refuses.
	MasterType string
	// MasterURIFormat is master_uri_format: "default" splits a
	// "host:port" master entry; "ip_only" takes each entry whole as the
	// master's address, never split (salt/minion.py prep_ip_port).
	MasterURIFormat string
	// MasterAliveInterval is master_alive_interval: how often the
	// connection to the master is checked; 0 is never.
	MasterAliveInterval time.Duration
	// MasterFailback and MasterFailbackInterval return a failover
	// minion to the first master once it answers again.
	MasterFailback         bool
	MasterFailbackInterval time.Duration
	// RandomMaster (and its deprecated name master_shuffle) shuffles
	// the list before connecting.
	RandomMaster, MasterShuffle bool
	// RetryDNS is retry_dns: the wait before resolving a master name
	// again (0 fails at once); RetryDNSCount bounds the retries (0: no
	// bound, Salt's None).
	RetryDNS      time.Duration
	RetryDNSCount int
	// MasterTries is master_tries: rounds of the master list before
	// giving up (-1: forever); AuthTries is auth_tries: sends of one
	// sign-in request, each waiting auth_timeout.
	MasterTries, AuthTries int
	// VerifyMasterPubkeySign, AlwaysVerifySignature and
	// MasterSignKeyName check the master key's signature (pub_sig) with
	// pki_dir/<master_sign_key_name>.pub.
	VerifyMasterPubkeySign, AlwaysVerifySignature bool
	MasterSignKeyName                             string

	// Raw holds every option as read, for modules that read opts.
	Raw *ordered.Map
}

// DefaultMinion returns Salt's minion defaults for configuration
// directory dir.
func DefaultMinion(dir string) *Minion {
	m := &Minion{Dir: dir, File: filepath.Join(dir, "minion"), Raw: ordered.New()}
	setDefaults(m, minionOptions)
	return m
}

// minionOptions is every option of the minion config Brine reads, with
// Salt's defaults (salt/config/__init__.py DEFAULT_MINION_OPTS); see
// Option. salt-minion and salt-call both read this file.
var minionOptions = withShared([]Option[Minion]{
	typed("master", KindStrings, []any{"salt"}, "minion", func(m *Minion) any { return &m.Masters }),
	typed("id", KindString, "", "minion", func(m *Minion) any { return &m.ID }),
	typed("master_port", KindInt, 4506, "minion", func(m *Minion) any { return &m.MasterPort }),
	typed("publish_port", KindInt, 4505, "minion", func(m *Minion) any { return &m.PublishPort }),
	typed("root_dir", KindString, Syspaths.RootDir, "internal/config", func(m *Minion) any { return &m.RootDir }),
	typed("pki_dir", KindString, Syspaths.MinionPKIDir, "minion", func(m *Minion) any { return &m.PKIDir }),
	typed("cachedir", KindString, Syspaths.MinionCacheDir, "minion", func(m *Minion) any { return &m.CacheDir }),
	typed("grains", KindMapping, newMap, "minion", func(m *Minion) any { return &m.Grains }),
	seconds("acceptance_wait_time", time.Second, 10, "minion", func(m *Minion) any { return &m.AcceptanceWaitTime }),
	seconds("acceptance_wait_time_max", time.Second, 0, "minion", func(m *Minion) any { return &m.AcceptanceWaitTimeMax }),
	seconds("random_reauth_delay", time.Second, 10, "minion", func(m *Minion) any { return &m.RandomReauthDelay }),
	seconds("recon_default", time.Millisecond, 1000, "minion", func(m *Minion) any { return &m.ReconDefault }),
	seconds("recon_max", time.Millisecond, 10000, "minion", func(m *Minion) any { return &m.ReconMax }),
	typed("recon_randomize", KindBool, true, "minion", func(m *Minion) any { return &m.ReconRandomize }),
	typed("master_finger", KindString, "", "minion", func(m *Minion) any { return &m.MasterFinger }),
	seconds("auth_timeout", time.Second, 5, "minion", func(m *Minion) any { return &m.AuthTimeout }),
	seconds("return_retry_timer", time.Second, 5, "minion", func(m *Minion) any { return &m.ReturnRetryTimer }),
	seconds("return_retry_timer_max", time.Second, 10, "minion", func(m *Minion) any { return &m.ReturnRetryTimerMax }),
	typed("zmq_filtering", KindBool, false, "minion", func(m *Minion) any { return &m.ZMQFiltering }),
	typed("sign_pub_messages", KindBool, true, "minion", func(m *Minion) any { return &m.SignPubMessages }),
	typed("keysize", KindInt, 2048, "minion", func(m *Minion) any { return &m.KeySize }),
	typed("open_mode", KindBool, false, "minion", func(m *Minion) any { return &m.OpenMode }),
	seconds("grains_refresh_every", time.Minute, 0, "minion", func(m *Minion) any { return &m.GrainsRefreshEvery }),
	typed("grains_refresh_pre_exec", KindBool, false, "minion", func(m *Minion) any { return &m.GrainsRefreshPreExec }),
	typed("master_type", KindString, "str", "minion", func(m *Minion) any { return &m.MasterType }),
	typed("master_uri_format", KindString, "default", "minion", func(m *Minion) any { return &m.MasterURIFormat }),
	seconds("master_alive_interval", time.Second, 0, "minion", func(m *Minion) any { return &m.MasterAliveInterval }),
	typed("master_failback", KindBool, false, "minion", func(m *Minion) any { return &m.MasterFailback }),
	seconds("master_failback_interval", time.Second, 0, "minion", func(m *Minion) any { return &m.MasterFailbackInterval }),
	typed("random_master", KindBool, false, "minion", func(m *Minion) any { return &m.RandomMaster }),
	typed("master_shuffle", KindBool, false, "minion", func(m *Minion) any { return &m.MasterShuffle }),
	seconds("retry_dns", time.Second, 30, "minion", func(m *Minion) any { return &m.RetryDNS }),
	typed("retry_dns_count", KindInt, 0, "minion", func(m *Minion) any { return &m.RetryDNSCount }),
	typed("master_tries", KindInt, 1, "minion", func(m *Minion) any { return &m.MasterTries }),
	typed("auth_tries", KindInt, 7, "minion", func(m *Minion) any { return &m.AuthTries }),
	typed("verify_master_pubkey_sign", KindBool, false, "minion", func(m *Minion) any { return &m.VerifyMasterPubkeySign }),
	typed("always_verify_signature", KindBool, false, "minion", func(m *Minion) any { return &m.AlwaysVerifySignature }),
	typed("master_sign_key_name", KindString, "master_sign", "minion", func(m *Minion) any { return &m.MasterSignKeyName }),
	raw[Minion]("default_include", KindString, "internal/config"),
	raw[Minion]("file_client", KindString, "minion"),
	raw[Minion]("relay_port", KindInt, "minion"),
	// local: salt-call --local's option, which grains.setval also honours.
	raw[Minion]("local", KindBool, "state/modules/grains"),
	raw[Minion]("use_master_when_local", KindBool, "state/modules/event"),
	raw[Minion]("return", KindAny, "minion"),
	raw[Minion]("log_level", KindString, "cmd/salt-call"),
	raw[Minion]("log_file", KindString, "internal/daemon"),
	raw[Minion]("log_level_logfile", KindString, "internal/daemon"),
	raw[Minion]("log_fmt_logfile", KindString, "internal/daemon"),
	raw[Minion]("log_datefmt_logfile", KindString, "internal/daemon"),
	// The mine (minion/mine.go, state/modules/mine).
	raw[Minion]("mine_enabled", KindBool, "minion"),
	raw[Minion]("mine_interval", KindInt, "minion"),
	raw[Minion]("mine_return_job", KindBool, "minion"),
	raw[Minion]("output", KindString, "cmd/salt-call"),
	// The scheduler (internal/schedule) and beacons.
	raw[Minion]("schedule", KindAny, "minion"),
	raw[Minion]("schedule_returner", KindAny, "minion"),
	raw[Minion]("loop_interval", KindInt, "minion"),
	raw[Minion]("beacons", KindAny, "minion"),
	// Engines (minion/engines.go): the reactor engine and its map.
	raw[Minion]("engines", KindAny, "minion"),
	raw[Minion]("reactor", KindAny, "minion"),
	raw[Minion]("reactor_worker_threads", KindInt, "minion"),
	raw[Minion]("reactor_worker_hwm", KindInt, "minion"),
	raw[Minion]("reactor_niceness", KindAny, "minion"),
	raw[Minion]("reactor_refresh_interval", KindAny, "internal/reactor"),
	raw[Minion]("jinja_env", KindMapping, "internal/reactor"),
	raw[Minion]("conf_dir", KindString, "state/modules/schedule"),
})

// LoadMinion reads <dir>/minion and minion.d/*.conf; a missing main file
// means all defaults.
func LoadMinion(dir string, log *slog.Logger) (*Minion, error) {
	m := DefaultMinion(dir)
	raw, err := readWithIncludes(dir, m.File, "minion.d/*.conf")
	if err != nil {
		return nil, err
	}
	if err := m.Apply(raw, log); err != nil {
		return nil, err
	}
	return m, nil
}

// Apply sets the options in raw over the current values.
func (m *Minion) Apply(raw *ordered.Map, log *slog.Logger) error {
	m.Raw = raw
	r := &reader{raw: raw}
	applyTable(m, minionOptions, r)
	if m.GrainsRefreshEvery < 0 {
		// salt/minion.py schedules abs(grains_refresh_every) minutes.
		m.GrainsRefreshEvery = -m.GrainsRefreshEvery
	}
	if len(r.errs) > 0 {
		sort.Strings(r.errs)
		return fmt.Errorf("config %s: %s", m.File, strings.Join(r.errs, "; "))
	}
	warnUnknown(log, m.File, unknownKeys(raw, minionOptions))
	m.PKIDir = prependRoot(m.RootDir, m.PKIDir)
	m.CacheDir = prependRoot(m.RootDir, m.CacheDir)
	return nil
}
