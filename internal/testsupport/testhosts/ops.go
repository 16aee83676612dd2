package testhosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Host describes one running host.
type Host struct {
	// ID is the roster ID, host1…hostN.
	ID string
	// IP is the address the controller dials (10.250.C.I+1, or 127.0.0.1).
	IP string
	// Port is sshd's port: 22 in ModeNetns, a distinct port in ModeLoopback.
	Port int
	// Addr is IP:Port.
	Addr string
	// HostKey is the host's current public host key.
	HostKey ssh.PublicKey
	// Options are the host's HostOptions.
	Options HostOptions
	// Netns is the network namespace name (ModeNetns only).
	Netns string
	// LogPath is sshd's log file on the controller.
	LogPath string
}

// Hosts returns every host, in ID order.
func (c *Cluster) Hosts() []Host {
	out := make([]Host, 0, len(c.st.Hosts))
	for _, h := range c.st.Hosts {
		hh, _ := c.Host(h.ID)
		out = append(out, hh)
	}
	return out
}

// Host returns host id.
func (c *Cluster) Host(id string) (Host, error) {
	h, err := c.host(id)
	if err != nil {
		return Host{}, err
	}
	k, err := loadPublicKey(h.hostKeyPath() + ".pub")
	if err != nil {
		return Host{}, fmt.Errorf("host key of %s: %w", id, err)
	}
	return Host{ID: h.ID, IP: h.IP, Port: h.Port, Addr: h.addr(), HostKey: k, Options: h.Options,
		Netns: h.Netns, LogPath: h.path("sshd.log")}, nil
}

// Mode returns the networking mode in use.
func (c *Cluster) Mode() Mode { return c.st.Mode }

// Isolated reports whether hosts have private mount and UTS namespaces
// (true whenever the harness runs as root).
func (c *Cluster) Isolated() bool { return c.st.Isolated }

// Number returns the cluster number C (its subnet is 10.250.C.0/24, or
// 10.<501-C>.0.0/16 for a cluster of more than 253 hosts; see Subnet).
func (c *Cluster) Number() int { return c.st.Cluster }

// Subnet returns the cluster's subnet in CIDR notation (ModeNetns), or
// 127.0.0.1/32 in ModeLoopback.
func (c *Cluster) Subnet() string {
	if c.st.Mode == ModeNetns {
		return subnetOf(c.st.Cluster)
	}
	return "127.0.0.1/32"
}

// ControllerIP is the address hosts see the controller at (the bridge), or
// 127.0.0.1 in ModeLoopback.
func (c *Cluster) ControllerIP() string {
	if c.st.Mode == ModeNetns {
		return bridgeIP(c.st.Cluster)
	}
	return "127.0.0.1"
}

// User returns the login user's name.
func (c *Cluster) User() string { return c.st.User.Name }

// Password returns the login user's password (for PasswordAuth and
// SudoPassword hosts).
func (c *Cluster) Password() string { return c.st.Password }

// Dir returns the directory holding roster, known_hosts, key and state.json.
func (c *Cluster) Dir() string { return c.st.Dir }

// KeyPath returns the client private key (OpenSSH format, ed25519) that the
// login user and root accept on every host; KeyPath()+".pub" is its public
// half.
func (c *Cluster) KeyPath() string { return filepath.Join(c.st.Dir, "key") }

// Signer returns the client key for golang.org/x/crypto/ssh.
func (c *Cluster) Signer() ssh.Signer { return c.signer }

// RosterPath returns the Salt flat roster written at start.
func (c *Cluster) RosterPath() string { return filepath.Join(c.st.Dir, "roster") }

// KnownHostsPath returns the known_hosts file written at start. It is not
// rewritten by ChangeHostKey, so it goes stale exactly as a user's would;
// call WriteKnownHosts to refresh it.
func (c *Cluster) KnownHostsPath() string { return filepath.Join(c.st.Dir, "known_hosts") }

// ClientConfig returns an ssh.ClientConfig for user with the cluster key,
// checking host keys against each host's current key.
func (c *Cluster) ClientConfig(user string) *ssh.ClientConfig {
	return &ssh.ClientConfig{
		User: user,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(c.signer)},
		HostKeyCallback: func(hostname string, remote net.Addr, key ssh.PublicKey) error {
			for _, h := range c.Hosts() {
				if h.Addr == remote.String() {
					if !bytes.Equal(h.HostKey.Marshal(), key.Marshal()) {
						return fmt.Errorf("host key of %s: mismatch", h.ID)
					}
					return nil
				}
			}
			return fmt.Errorf("host key: unknown host %s", remote)
		},
		Timeout: 10 * time.Second,
	}
}

// StopHost kills host id's sshd and everything else running inside the
// host (open sessions included), as a crashed machine would lose them; the
// host's files and namespaces stay, so its port refuses connections.
func (c *Cluster) StopHost(ctx context.Context, id string) error {
	h, err := c.host(id)
	if err != nil {
		return err
	}
	defer c.lockHost(h)()
	if err := stopHostProcs(ctx, h.Dir); err != nil {
		return fmt.Errorf("stop %s: %w", id, err)
	}
	return nil
}

// StartHost starts host id's sshd again (after StopHost) and waits until it
// accepts connections. Starting a running host is an error.
func (c *Cluster) StartHost(ctx context.Context, id string) error {
	h, err := c.host(id)
	if err != nil {
		return err
	}
	defer c.lockHost(h)()
	var cur procRef
	if readJSON(h.path("sshd.pid"), &cur) == nil && cur.alive() {
		return fmt.Errorf("start %s: sshd is already running (pid %d)", id, cur.Pid)
	}
	if err := c.startSSHD(ctx, h); err != nil {
		return fmt.Errorf("start %s: %w", id, err)
	}
	return nil
}

// ChangeHostKey gives host id a new host key and restarts its sshd; it
// returns the new public key. KnownHostsPath keeps the old key.
func (c *Cluster) ChangeHostKey(ctx context.Context, id string) (ssh.PublicKey, error) {
	h, err := c.host(id)
	if err != nil {
		return nil, err
	}
	defer c.lockHost(h)()
	if err := stopHostProcs(ctx, h.Dir); err != nil {
		return nil, fmt.Errorf("change host key of %s: %w", id, err)
	}
	s, err := newKey(h.hostKeyPath(), "root@"+h.ID)
	if err != nil {
		return nil, fmt.Errorf("change host key of %s: %w", id, err)
	}
	if h.Options.HostCert {
		if err := c.signHostKey(h); err != nil {
			return nil, fmt.Errorf("change host key of %s: %w", id, err)
		}
	}
	if err := c.startSSHD(ctx, h); err != nil {
		return nil, fmt.Errorf("change host key of %s: %w", id, err)
	}
	return s.PublicKey(), nil
}

// LinkDown takes host id's link down (the bridge side of its veth): packets
// to it are dropped, so connections hang rather than being refused.
func (c *Cluster) LinkDown(ctx context.Context, id string) error { return c.setLink(ctx, id, "down") }

// LinkUp brings host id's link back up.
func (c *Cluster) LinkUp(ctx context.Context, id string) error { return c.setLink(ctx, id, "up") }

func (c *Cluster) setLink(ctx context.Context, id, updown string) error {
	h, err := c.host(id)
	if err != nil {
		return err
	}
	if c.st.Mode != ModeNetns {
		return fmt.Errorf("link %s %s: %w", updown, id, ErrUnsupported)
	}
	if front := h.Options.BehindHost; front != "" {
		return ipCmd(ctx, "-n", netnsName(c.st.Cluster, hostIndex(front)), "link", "set", h.Veth, updown)
	}
	return ipCmd(ctx, "link", "set", h.Veth, updown)
}

// Exec runs the shell script as root inside host id's namespaces (mount,
// UTS and network), with a clean environment, and returns its stdout. A
// non-zero exit is an *ExitError carrying the code and stderr.
func (c *Cluster) Exec(ctx context.Context, id, script string) ([]byte, error) {
	h, err := c.host(id)
	if err != nil {
		return nil, err
	}
	pre, err := c.nsenter(h)
	if err != nil {
		return nil, fmt.Errorf("exec on %s: %w", id, err)
	}
	args := append(pre, "/bin/sh", "-c", script)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = cleanEnv()
	cmd.Dir = "/"
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return stdout.Bytes(), &ExitError{Host: id, Code: ee.ExitCode(), Stderr: stderr.String()}
	}
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("exec on %s: %w", id, err)
	}
	return stdout.Bytes(), nil
}

// HostPath maps path, as seen inside host id, to the controller path that
// backs it. Only the host's private paths (/tmp, /var/tmp, /etc/salt, /root,
// the login user's home, /etc/sudoers.d, /etc/hosts and the minion's
// directories listed in the package doc) can be mapped; others return
// ErrNotPrivate.
func (c *Cluster) HostPath(id, path string) (string, error) {
	h, err := c.host(id)
	if err != nil {
		return "", err
	}
	if !c.st.Isolated {
		return "", fmt.Errorf("host path %s: %w", path, ErrUnsupported)
	}
	p := filepath.Clean(path)
	best := privateDir{}
	for _, pd := range privateDirs(c.st.User, h.Options) {
		if (p == pd.InHost || strings.HasPrefix(p, pd.InHost+"/")) && len(pd.InHost) > len(best.InHost) {
			best = pd
		}
	}
	if best.InHost == "" || !filepath.IsAbs(path) {
		return "", fmt.Errorf("host path %s on %s: %w", path, id, ErrNotPrivate)
	}
	return filepath.Join(h.path("fs"), best.Backing, strings.TrimPrefix(p, best.InHost)), nil
}

// writeClientFiles writes roster, known_hosts and state.json to Dir and
// records ownership (detached clusters are owned by their state file).
func (c *Cluster) writeClientFiles() error {
	if err := c.WriteRoster(c.RosterPath()); err != nil {
		return err
	}
	if err := c.WriteKnownHosts(c.KnownHostsPath()); err != nil {
		return err
	}
	sf := filepath.Join(c.st.Dir, "state.json")
	if err := writeJSON(sf, c.st, 0o600); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if c.st.Detached {
		return writeJSON(ownerFile(c.st.WorkDir), owner{Detached: true, StateFile: sf}, 0o644)
	}
	return nil
}

// WriteRoster writes a Salt flat roster for all hosts to path: host, port,
// user, priv and sudo: True for each, plus passwd for hosts that take a
// password (PasswordAuth or SudoPassword) and a ProxyJump ssh_option for
// hosts behind others.
func (c *Cluster) WriteRoster(path string) error {
	var b strings.Builder
	for _, h := range c.st.Hosts {
		fmt.Fprintf(&b, "%s:\n  host: %s\n  port: %d\n  user: %s\n  priv: %s\n  sudo: True\n",
			h.ID, h.IP, h.Port, c.st.User.Name, c.KeyPath())
		if h.Options.PasswordAuth || h.Options.SudoPassword {
			fmt.Fprintf(&b, "  passwd: %q\n", c.st.Password)
		}
		if jump := c.ProxyJump(h.ID); jump != "" {
			fmt.Fprintf(&b, "  ssh_options:\n    - ProxyJump=%s\n", jump)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write roster: %w", err)
	}
	return nil
}

// WriteKnownHosts writes every host's current host key to path in OpenSSH
// known_hosts format ("10.250.C.X ssh-ed25519 …", or "[127.0.0.1]:PORT …").
func (c *Cluster) WriteKnownHosts(path string) error {
	var b strings.Builder
	for _, h := range c.Hosts() {
		fmt.Fprintf(&b, "%s %s", knownHostsName(c.st.Hosts[hostIndex(h.ID)-1]), ssh.MarshalAuthorizedKey(h.HostKey))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write known_hosts: %w", err)
	}
	return nil
}

// ProxyJump returns the ProxyJump value that reaches host id through the
// hosts it is behind ("brine@10.250.C.2,brine@10.250.C.3"), or "" for a
// host the controller reaches directly.
func (c *Cluster) ProxyJump(id string) string {
	h, err := c.host(id)
	if err != nil {
		return ""
	}
	var hops []string
	for front := h.Options.BehindHost; front != ""; {
		f, err := c.host(front)
		if err != nil {
			return ""
		}
		hops = append([]string{c.st.User.Name + "@" + knownHostsName(f)}, hops...)
		front = f.Options.BehindHost
	}
	return strings.Join(hops, ",")
}
