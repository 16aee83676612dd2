// Package master is salt-master over ZeroMQ (salt/master.py,
// salt/channel/server.py): the _auth handshake with the key directories
// of internal/pki, the publish channel carrying signed, AES-encrypted
// jobs, the request channel where minions send returns and ask for
// pillar and files, the job cache, the minion data cache, the event bus
// and the local socket salt and salt-run use.
package master

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/state/ordered"
)

// Options are the master settings, with Salt's names and defaults
// (salt/config/__init__.py DEFAULT_MASTER_OPTS).
type Options struct {
	Interface        string
	PublishPort      int
	RetPort          int
	WorkerThreads    int
	PKIDir           string
	CacheDir         string
	SockDir          string
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
	Raw              *ordered.Map
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
		MaxMessage: 100 << 20, KeySize: 2048, Raw: ordered.New(),
	}
}

// OptionsFromConfig reads the master options from a loaded config.
func OptionsFromConfig(c *config.Master) (Options, error) {
	o := DefaultOptions()
	o.PKIDir, o.CacheDir = c.PKIDir, c.CacheDir
	o.FileRoots, o.PillarRoots = c.FileRoots, c.PillarRoots
	o.Raw = c.Raw
	raw := c.Raw
	var err error
	str := func(k string, dst *string) {
		if v, ok := raw.Get(k); ok && v != nil {
			*dst = ordered.KeyString(v)
		}
	}
	num := func(k string, dst *int) {
		if v, ok := raw.Get(k); ok && v != nil && err == nil {
			n, e := strconv.Atoi(ordered.KeyString(v))
			if e != nil {
				err = fmt.Errorf("option %s: want a number, got %v", k, v)
				return
			}
			*dst = n
		}
	}
	flag := func(k string, dst *bool) {
		if v, ok := raw.Get(k); ok && v != nil {
			b, isBool := v.(bool)
			if !isBool && err == nil {
				err = fmt.Errorf("option %s: want True or False, got %v", k, v)
				return
			}
			*dst = b
		}
	}
	secs := func(k string, unit time.Duration, dst *time.Duration) {
		n := -1
		num(k, &n)
		if n >= 0 {
			*dst = time.Duration(n) * unit
		}
	}
	str("interface", &o.Interface)
	num("publish_port", &o.PublishPort)
	num("ret_port", &o.RetPort)
	num("worker_threads", &o.WorkerThreads)
	str("sock_dir", &o.SockDir)
	flag("auto_accept", &o.Auth.AutoAccept)
	flag("open_mode", &o.Auth.OpenMode)
	str("autosign_file", &o.Auth.AutosignFile)
	str("autoreject_file", &o.Auth.AutorejectFile)
	str("autosign_grains_dir", &o.Auth.AutosignGrainsDir)
	flag("permissive_pki_access", &o.Auth.PermissivePKIAccess)
	num("max_minions", &o.Auth.MaxMinions)
	secs("keep_jobs", time.Hour, &o.KeepJobs)
	secs("keep_jobs_seconds", time.Second, &o.KeepJobs)
	secs("timeout", time.Second, &o.Timeout)
	secs("gather_job_timeout", time.Second, &o.GatherJobTimeout)
	flag("zmq_filtering", &o.ZMQFiltering)
	flag("rotate_aes_key", &o.RotateAESKey)
	secs("publish_session", time.Second, &o.PublishSession)
	flag("sign_pub_messages", &o.SignPubMessages)
	secs("request_server_ttl", time.Second, &o.RequestTTL)
	num("keysize", &o.KeySize)
	if ng := c.Nodegroups; ng != nil {
		o.Nodegroups = map[string]any{}
		ng.Range(func(k, v any) bool { o.Nodegroups[ordered.KeyString(k)] = v; return true })
	}
	if !raw.Has("sock_dir") && c.RootDir != "" && c.RootDir != "/" {
		o.SockDir = filepath.Join(c.RootDir, o.SockDir)
	}
	return o, err
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
