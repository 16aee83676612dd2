package config

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/brinesalt/brine/state/ordered"
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
	SockDir     string
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
	Multiprocessing       bool
	AuthTimeout           time.Duration
	ReturnRetryTimer      time.Duration
	ReturnRetryTimerMax   time.Duration
	ZMQFiltering          bool
	KeySize               int
	OpenMode              bool
	// GrainsRefreshEvery is grains_refresh_every (minutes in the file):
	// how often the running minion gathers its grains again and, when
	// they changed, refreshes its pillar so the master sees them; 0 is
	// never.
	GrainsRefreshEvery time.Duration
	// GrainsRefreshPreExec is grains_refresh_pre_exec: gather the
	// grains again before every job.
	GrainsRefreshPreExec bool

	// Raw holds every option as read, for modules that read opts.
	Raw *ordered.Map
}

// DefaultMinion returns Salt's minion defaults for configuration
// directory dir.
func DefaultMinion(dir string) *Minion {
	return &Minion{
		Dir: dir, File: filepath.Join(dir, "minion"),
		Masters: []string{"salt"}, MasterPort: 4506, PublishPort: 4505,
		RootDir: "/", PKIDir: "/etc/salt/pki/minion", CacheDir: "/var/cache/salt/minion", SockDir: "/var/run/salt/minion",
		Grains: ordered.New(), AcceptanceWaitTime: 10 * time.Second, RandomReauthDelay: 10 * time.Second,
		ReconDefault: time.Second, ReconMax: 10 * time.Second, ReconRandomize: true, Multiprocessing: true,
		AuthTimeout: 5 * time.Second, ReturnRetryTimer: 5 * time.Second, ReturnRetryTimerMax: 10 * time.Second,
		KeySize: 2048, Raw: ordered.New(),
	}
}

var knownMinion = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`master id master_port publish_port root_dir pki_dir cachedir sock_dir
		grains acceptance_wait_time acceptance_wait_time_max random_reauth_delay recon_default recon_max
		recon_randomize master_finger multiprocessing auth_timeout return_retry_timer return_retry_timer_max
		zmq_filtering keysize open_mode default_include log_level log_file file_roots pillar_roots
		file_client user master_type grains_refresh_every grains_refresh_pre_exec`) {
		knownMinion[k] = true
	}
}

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
	str, num, boolean, dur := r.str, r.num, r.boolean, r.duration
	switch v := raw.Value("master").(type) {
	case nil:
	case []any:
		m.Masters = nil
		for _, x := range v {
			m.Masters = append(m.Masters, ordered.KeyString(x))
		}
	default:
		m.Masters = []string{ordered.KeyString(v)}
	}
	str("id", &m.ID)
	num("master_port", &m.MasterPort)
	num("publish_port", &m.PublishPort)
	str("root_dir", &m.RootDir)
	str("pki_dir", &m.PKIDir)
	str("cachedir", &m.CacheDir)
	str("sock_dir", &m.SockDir)
	r.mapping("grains", &m.Grains)
	dur("acceptance_wait_time", time.Second, &m.AcceptanceWaitTime)
	dur("acceptance_wait_time_max", time.Second, &m.AcceptanceWaitTimeMax)
	dur("random_reauth_delay", time.Second, &m.RandomReauthDelay)
	dur("recon_default", time.Millisecond, &m.ReconDefault)
	dur("recon_max", time.Millisecond, &m.ReconMax)
	boolean("recon_randomize", &m.ReconRandomize)
	str("master_finger", &m.MasterFinger)
	boolean("multiprocessing", &m.Multiprocessing)
	dur("auth_timeout", time.Second, &m.AuthTimeout)
	dur("return_retry_timer", time.Second, &m.ReturnRetryTimer)
	dur("return_retry_timer_max", time.Second, &m.ReturnRetryTimerMax)
	boolean("zmq_filtering", &m.ZMQFiltering)
	num("keysize", &m.KeySize)
	boolean("open_mode", &m.OpenMode)
	dur("grains_refresh_every", time.Minute, &m.GrainsRefreshEvery)
	if m.GrainsRefreshEvery < 0 {
		// salt/minion.py schedules abs(grains_refresh_every) minutes.
		m.GrainsRefreshEvery = -m.GrainsRefreshEvery
	}
	boolean("grains_refresh_pre_exec", &m.GrainsRefreshPreExec)
	var unknown []string
	for _, k := range raw.StringKeys() {
		if !knownMinion[k] {
			unknown = append(unknown, k)
		}
	}
	if len(r.errs) > 0 {
		sort.Strings(r.errs)
		return fmt.Errorf("config %s: %s", m.File, strings.Join(r.errs, "; "))
	}
	if len(unknown) > 0 && log != nil {
		log.Warn("keeping options Brine does not use", "file", m.File, "options", strings.Join(unknown, ", "))
	}
	m.PKIDir = prependRoot(m.RootDir, m.PKIDir)
	m.CacheDir = prependRoot(m.RootDir, m.CacheDir)
	m.SockDir = prependRoot(m.RootDir, m.SockDir)
	return nil
}
