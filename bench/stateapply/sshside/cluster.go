package sshside

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// Env is a started cluster with the inputs both tools share.
type Env struct {
	Cluster *testhosts.Cluster
	// Work is the scratch directory; FileRoot is the salt:// root and
	// Ansible's playbook directory (templates and files live there).
	Work, FileRoot string
	// Etc holds Brine's master config (file_roots, roster, known_hosts).
	Etc string
	// Inventory is Ansible's INI inventory of the same hosts.
	Inventory string
	bridge    string
}

// Start starts n hosts under a fresh scratch directory. The caller must
// call Close, also when Start fails half way (Close on a nil-cluster Env
// only removes the directory).
func Start(ctx context.Context, n int) (*Env, error) {
	work, err := os.MkdirTemp("", "sshside-")
	if err != nil {
		return nil, err
	}
	e := &Env{Work: work, FileRoot: filepath.Join(work, "srv"), Etc: filepath.Join(work, "etc"),
		Inventory: filepath.Join(work, "inventory.ini")}
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	c, err := testhosts.Start(startCtx, testhosts.Config{N: n, Dir: filepath.Join(work, "hosts")})
	if err != nil {
		return e, fmt.Errorf("start %d hosts: %w", n, err)
	}
	e.Cluster = c
	if c.Mode() == testhosts.ModeNetns {
		e.bridge = fmt.Sprintf("brth%d", c.Number())
	}
	return e, e.writeInputs()
}

// Close stops the hosts and removes the scratch directory, with its own
// deadline so it also runs after ctx was cancelled.
func (e *Env) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var err error
	if e.Cluster != nil {
		err = e.Cluster.Close(ctx)
	}
	if rerr := os.RemoveAll(e.Work); err == nil {
		err = rerr
	}
	return err
}

// writeInputs gives both tools the same hosts, user and key; neither uses
// sudo: the states write under the login user's reach (/tmp is private
// to every host).
func (e *Env) writeInputs() error {
	c := e.Cluster
	if err := os.MkdirAll(e.Etc, 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(e.FileRoot, 0o755); err != nil {
		return err
	}
	roster := filepath.Join(e.Work, "roster")
	master := fmt.Sprintf("pki_dir: %s/pki\ncachedir: %s/cache\nknown_hosts_file: %s\nroster_file: %s\nssh_log_file: %s/ssh.log\nfile_roots:\n  base:\n    - %s\n",
		e.Work, e.Work, c.KnownHostsPath(), roster, e.Work, e.FileRoot)
	var inv, ros strings.Builder
	inv.WriteString("[all]\n")
	for _, h := range c.Hosts() {
		fmt.Fprintf(&inv, "%s ansible_host=%s ansible_port=%d ansible_user=%s ansible_ssh_private_key_file=%s\n",
			h.ID, h.IP, h.Port, c.User(), c.KeyPath())
		fmt.Fprintf(&ros, "%s:\n  host: %s\n  port: %d\n  user: %s\n  priv: %s\n", h.ID, h.IP, h.Port, c.User(), c.KeyPath())
	}
	for path, body := range map[string]string{filepath.Join(e.Etc, "master"): master, roster: ros.String(), e.Inventory: inv.String()} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// wireBytes is the traffic through the cluster's bridge so far, both
// directions (every byte between the controller and the hosts crosses
// it); -1 when the hosts share the loopback interface.
func (e *Env) wireBytes() int64 {
	if e.bridge == "" {
		return -1
	}
	var sum int64
	for _, f := range []string{"rx_bytes", "tx_bytes"} {
		b, err := os.ReadFile(filepath.Join("/sys/class/net", e.bridge, "statistics", f))
		if err != nil {
			return -1
		}
		var n int64
		fmt.Sscan(strings.TrimSpace(string(b)), &n)
		sum += n
	}
	return sum
}
