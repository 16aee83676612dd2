package master

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/eauth"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
)

// Options are the master settings, with Salt's names and defaults
// (salt/config/__init__.py DEFAULT_MASTER_OPTS).
type Options struct {
	Interface     string
	PublishPort   int
	RetPort       int
	WorkerThreads int
	PKIDir        string
	CacheDir      string
	SockDir       string
	// ConfDir is the configuration directory (-c), where the
	// scheduler's master.d/_schedule.conf lives.
	ConfDir          string
	FileRoots        map[string][]string
	PillarRoots      map[string][]string
	Auth             pki.AuthOptions
	KeepJobs         time.Duration // keep_jobs_seconds (keep_jobs hours)
	Nodegroups       map[string]any
	Timeout          time.Duration
	GatherJobTimeout time.Duration
	ZMQFiltering     bool
	RotateAESKey     bool
	PublishSession   time.Duration
	SignPubMessages  bool
	RequestTTL       time.Duration // request_server_ttl; 0 disables
	MaxMessage       int           // largest request accepted
	KeySize          int
	// OrderMasters and SyndicWait are order_masters and syndic_wait:
	// this master has syndics below it (master/syndic.go).
	OrderMasters bool
	SyndicWait   time.Duration
	// MasterID is master_id: a name put on every publication as
	// "master_id" (unless the publisher names one), which the minions
	// echo in their returns and a syndic uses to refuse its own master's
	// jobs coming back and to route returns (salt/master.py publish,
	// salt/minion.py Syndic). Empty: not set, as Salt's default.
	MasterID string
	Raw      *ordered.Map
	// PAM is the pam eauth backend (internal/eauth/pam, which needs
	// cgo); cmd/salt-master sets it, and without it pam refuses.
	PAM eauth.Backend
	// Runners are runner functions served by packages above the master
	// (orchestrate's state.orchestrate family), by Salt's name;
	// cmd/salt-master sets them. The master's own runners win.
	Runners map[string]RunnerFunc
}

// DefaultOptions are Salt's defaults.
func DefaultOptions() Options {
	return Options{
		Interface: "0.0.0.0", PublishPort: 4505, RetPort: 4506, WorkerThreads: 5,
		PKIDir: "/etc/salt/pki/master", CacheDir: "/var/cache/salt/master", SockDir: "/var/run/salt/master",
		FileRoots:   map[string][]string{"base": {"/srv/salt"}},
		PillarRoots: map[string][]string{"base": {"/srv/pillar"}},
		Auth:        pki.AuthOptions{AutosignTimeout: 120 * time.Minute},
		KeepJobs:    24 * time.Hour, Timeout: 5 * time.Second, GatherJobTimeout: 10 * time.Second,
		RotateAESKey: true, PublishSession: 86400 * time.Second, SignPubMessages: true,
		MaxMessage: 100 << 20, KeySize: 2048, SyndicWait: 5 * time.Second, Raw: ordered.New(),
	}
}

// OptionsFromConfig takes the master options from a loaded config,
// whose option table (internal/config) reads and types them.
func OptionsFromConfig(c *config.Master) (Options, error) {
	o := DefaultOptions()
	o.PKIDir, o.CacheDir, o.SockDir = c.PKIDir, c.CacheDir, c.SockDir
	o.FileRoots, o.PillarRoots = c.FileRoots, c.PillarRoots
	o.Raw = c.Raw
	o.ConfDir = c.Dir
	o.Interface, o.PublishPort, o.RetPort, o.WorkerThreads = c.Interface, c.PublishPort, c.RetPort, c.WorkerThreads
	o.Auth.AutoAccept, o.Auth.OpenMode = c.AutoAccept, c.OpenMode
	o.Auth.AutosignFile, o.Auth.AutorejectFile, o.Auth.AutosignGrainsDir = c.AutosignFile, c.AutorejectFile, c.AutosignGrainsDir
	o.Auth.PermissivePKIAccess, o.Auth.MaxMinions = c.PermissivePKIAccess, c.MaxMinions
	o.KeepJobs = keepJobs(c)
	o.Timeout, o.GatherJobTimeout = c.Timeout, c.GatherJobTimeout
	o.ZMQFiltering, o.RotateAESKey, o.PublishSession = c.ZMQFiltering, c.RotateAESKey, c.PublishSession
	o.SignPubMessages, o.RequestTTL, o.KeySize = c.SignPubMessages, c.RequestServerTTL, c.KeySize
	o.OrderMasters, _ = c.Raw.Value("order_masters").(bool)
	if v, ok := c.Raw.Get("master_id"); ok && v != nil {
		o.MasterID = ordered.KeyString(v)
	}
	if n, ok := c.Raw.Value("syndic_wait").(int); ok && n >= 0 {
		o.SyndicWait = time.Duration(n) * time.Second
	}
	if ng := c.Nodegroups; ng != nil {
		o.Nodegroups = map[string]any{}
		ng.Range(func(k, v any) bool { o.Nodegroups[ordered.KeyString(k)] = v; return true })
	}
	return o, nil
}

// keepJobs is salt/utils/job.py get_keep_jobs_seconds: keep_jobs_seconds,
// unless it is left at its default and the deprecated keep_jobs (hours)
// is not.
func keepJobs(c *config.Master) time.Duration {
	if c.KeepJobsTime == 86400*time.Second && c.KeepJobs != 24*time.Hour {
		return c.KeepJobs
	}
	return c.KeepJobsTime
}

// LocalSocket is the path of the local client socket under sock_dir.
func (o Options) LocalSocket() string { return filepath.Join(o.SockDir, "brine-master.sock") }

func (o Options) ensureDirs() error {
	for _, d := range []string{o.CacheDir, filepath.Join(o.CacheDir, "jobs"), filepath.Join(o.CacheDir, "minions"),
		filepath.Join(o.CacheDir, "sessions"), o.SockDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	return nil
}
