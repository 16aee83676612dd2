package testhosts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// stateVersion is bumped when state.json changes incompatibly.
const stateVersion = 1

// state is what state.json records: enough for Load to operate on and tear
// down a cluster started by another process.
type state struct {
	Version  int          `json:"version"`
	Cluster  int          `json:"cluster"`
	Mode     Mode         `json:"mode"`
	Isolated bool         `json:"isolated"`
	Detached bool         `json:"detached"`
	WorkDir  string       `json:"work_dir"`
	Dir      string       `json:"dir"`
	SSHD     string       `json:"sshd"`
	User     loginUser    `json:"user"`
	Password string       `json:"password"`
	LogLevel string       `json:"log_level"`
	Hosts    []*hostState `json:"hosts"`
}

// Cluster is a set of running sshd hosts. Its methods are safe for
// concurrent use; operations on one host are serialised.
type Cluster struct {
	st     state
	signer ssh.Signer
	hostMu []sync.Mutex // by index-1
	mu     sync.Mutex   // guards closed
	closed bool
	reaped sync.WaitGroup // reapers of the processes this Cluster started
}

// Start brings up a cluster as described by cfg. On error nothing is left
// behind.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	sshd, err := findSSHD()
	if err != nil {
		return nil, err
	}
	root := os.Geteuid() == 0
	if !root {
		if err := checkUnprivileged(&cfg); err != nil {
			return nil, err
		}
	}
	begin := time.Now()
	c := &Cluster{hostMu: make([]sync.Mutex, cfg.N)}
	c.st = state{Version: stateVersion, Isolated: root, Detached: cfg.Detach, SSHD: sshd,
		Password: cfg.Password, LogLevel: cfg.LogLevel}
	err = withLock(ctx, func() error {
		n, err := allocate(ctx, cfg.Logf, cfg.N)
		if err != nil {
			return err
		}
		c.st.Cluster, c.st.WorkDir = n, workDirOf(n)
		if !root {
			c.st.User, err = lookupUser(cfg.User)
			return err
		}
		c.st.User, err = privateUser(ctx, cfg.User, cfg.Password)
		return err
	})
	if err != nil {
		if c.st.WorkDir != "" {
			_ = teardown(context.WithoutCancel(ctx), c.st.Cluster, c.st.WorkDir)
		}
		return nil, fmt.Errorf("testhosts: %w", err)
	}
	if err := c.start(ctx, cfg); err != nil {
		_ = teardown(context.WithoutCancel(ctx), c.st.Cluster, c.st.WorkDir)
		return nil, fmt.Errorf("testhosts: cluster %d: %w", c.st.Cluster, err)
	}
	cfg.Logf("testhosts: cluster %d: %d hosts up in %s (mode %s, %s)", c.st.Cluster, cfg.N,
		time.Since(begin).Round(time.Millisecond), c.st.Mode, subnetOrLoopback(c.st))
	return c, nil
}

func subnetOrLoopback(st state) string {
	if st.Mode == ModeNetns {
		return subnetOf(st.Cluster)
	}
	return "127.0.0.1"
}

// checkUnprivileged adapts cfg for a run without root: loopback hosts that
// are plain sshd processes of the current user, without private mounts, so
// options that need root are refused.
func checkUnprivileged(cfg *Config) error {
	if cfg.Mode == ModeNetns {
		return fmt.Errorf("testhosts: network namespaces as uid %d: %w", os.Geteuid(), ErrUnsupported)
	}
	cfg.Mode = ModeLoopback
	u, err := user.Current()
	if err != nil {
		return fmt.Errorf("testhosts: current user: %w", err)
	}
	cfg.User = u.Username
	for i := 1; i <= cfg.N; i++ {
		if cfg.options(hostID(i)).needsRoot() {
			return fmt.Errorf("testhosts: options of %s need root: %w", hostID(i), ErrUnsupported)
		}
	}
	return nil
}

// SSHDEnv names the environment variable that selects the sshd binary (for
// another OpenSSH build); by default sshd is looked up on PATH and in
// /usr/sbin and /usr/local/sbin.
const SSHDEnv = "BRINE_SSHD"

func findSSHD() (string, error) {
	if p := os.Getenv(SSHDEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", SSHDEnv, p, ErrNoSSHD)
		}
		return filepath.Abs(p)
	}
	if p, err := exec.LookPath("sshd"); err == nil {
		return filepath.Abs(p)
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", ErrNoSSHD
}

// start does the work of Start after allocation.
func (c *Cluster) start(ctx context.Context, cfg Config) error {
	if c.st.Isolated {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privsep dir
			return err
		}
	}
	if err := c.setupMode(ctx, cfg); err != nil {
		return err
	}
	c.st.Dir = filepath.Join(c.st.WorkDir, "client")
	if cfg.Dir != "" {
		abs, err := filepath.Abs(cfg.Dir)
		if err != nil {
			return err
		}
		c.st.Dir = abs
	}
	if err := os.MkdirAll(c.st.Dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", c.st.Dir, err)
	}
	signer, err := newKey(c.KeyPath(), "brine-testhosts")
	if err != nil {
		return err
	}
	c.signer = signer
	pub, err := os.ReadFile(c.KeyPath() + ".pub")
	if err != nil {
		return err
	}
	if err := c.layoutHosts(cfg); err != nil {
		return err
	}
	if err := c.makeHostCA(); err != nil {
		return err
	}
	if err := c.eachHost(ctx, func(_ context.Context, h *hostState) error { return c.prepareHost(h, pub) }); err != nil {
		return err
	}
	if c.st.Mode == ModeNetns {
		if err := setupHostLinks(ctx, c.st.Cluster, c.st.Hosts); err != nil {
			return err
		}
	}
	if err := c.eachHost(ctx, c.bootHost); err != nil {
		return err
	}
	return c.writeClientFiles()
}

// setupMode settles the mode: netns when asked or possible, else loopback.
func (c *Cluster) setupMode(ctx context.Context, cfg Config) error {
	c.st.Mode = cfg.Mode
	if c.st.Mode == ModeLoopback {
		return behindNeedsNetns(cfg)
	}
	err := setupBridge(ctx, c.st.Cluster)
	if err == nil {
		c.st.Mode = ModeNetns
		return nil
	}
	if cfg.Mode == ModeNetns {
		return fmt.Errorf("network namespaces: %w", err)
	}
	cfg.Logf("testhosts: no network namespaces (%v); falling back to 127.0.0.1", err)
	c.st.Mode = ModeLoopback
	return behindNeedsNetns(cfg)
}

// behindNeedsNetns refuses BehindHost without network namespaces.
func behindNeedsNetns(cfg Config) error {
	for i := 1; i <= cfg.N; i++ {
		if cfg.options(hostID(i)).BehindHost != "" {
			return fmt.Errorf("BehindHost of %s: %w", hostID(i), ErrUnsupported)
		}
	}
	return nil
}

// layoutHosts assigns IDs, addresses, ports and names.
func (c *Cluster) layoutHosts(cfg Config) error {
	var ports []int
	if c.st.Mode == ModeLoopback {
		var err error
		if ports, err = freePorts(cfg.N); err != nil {
			return err
		}
	}
	for i := 1; i <= cfg.N; i++ {
		h := &hostState{ID: hostID(i), Index: i, Dir: filepath.Join(c.st.WorkDir, hostID(i)), Options: cfg.options(hostID(i))}
		if c.st.Mode == ModeNetns {
			h.IP, h.Port, h.Netns, h.Veth = hostIP(c.st.Cluster, i), 22, netnsName(c.st.Cluster, i), vethName(c.st.Cluster, i)
		} else {
			h.IP, h.Port = "127.0.0.1", ports[i-1]
		}
		c.st.Hosts = append(c.st.Hosts, h)
	}
	return nil
}

// freePorts returns n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// bootHost brings one prepared host up: addresses, holder, sshd.
func (c *Cluster) bootHost(ctx context.Context, h *hostState) error {
	if c.st.Mode == ModeNetns {
		setup := func() error { return setupHostAddr(ctx, c.st.Cluster, h.Index, c.bridgeHosts()) }
		if front := h.Options.BehindHost; front != "" {
			setup = func() error { return setupBehindAddr(ctx, c.st.Cluster, h.Index, hostIndex(front)) }
		}
		if err := setup(); err != nil {
			return err
		}
	}
	if c.st.Isolated {
		if err := c.startHolder(ctx, h); err != nil {
			return err
		}
	}
	return c.startSSHD(ctx, h)
}

// bridgeHosts are the indexes of the hosts on the bridge (not behind
// another host).
func (c *Cluster) bridgeHosts() []int {
	var out []int
	for _, h := range c.st.Hosts {
		if h.Options.BehindHost == "" {
			out = append(out, h.Index)
		}
	}
	return out
}

// bootParallel is how many hosts eachHost prepares and boots at once.
// Booting a host is fork and exec (ip, unshare, some thirty mounts,
// sshd) with a wait for sshd's first banner in between: 32 at once keep
// both cores of the test machine busy through those waits. Measured:
// 1,000 hosts in 68–100 s (load 16–30), about what 8 at once took per
// host for 200 (78 ms), so the bound is CPU, not the window.
const bootParallel = 32

// eachHost runs fn for every host, bootParallel at a time, and joins the
// errors.
func (c *Cluster) eachHost(ctx context.Context, fn func(context.Context, *hostState) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, bootParallel)
	)
	for _, h := range c.st.Hosts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, h); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Load attaches to a cluster recorded in dir/state.json (by Start with
// Config.Dir, typically the testhosts command with -detach).
func Load(dir string) (*Cluster, error) {
	c := &Cluster{}
	if err := readJSON(filepath.Join(dir, "state.json"), &c.st); err != nil {
		return nil, fmt.Errorf("load cluster: %w", err)
	}
	if c.st.Version != stateVersion {
		return nil, fmt.Errorf("load cluster: state version %d, want %d", c.st.Version, stateVersion)
	}
	c.hostMu = make([]sync.Mutex, len(c.st.Hosts))
	s, err := loadKey(c.KeyPath())
	if err != nil {
		return nil, fmt.Errorf("load cluster: %w", err)
	}
	c.signer = s
	return c, nil
}

// Close stops every host and removes the cluster's namespaces, links,
// processes and work directory, and the files it wrote to Config.Dir. It is
// idempotent.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	var errs []error
	err := withLock(ctx, func() error {
		return teardown(ctx, c.st.Cluster, c.st.WorkDir)
	})
	errs = append(errs, err)
	if err == nil && !c.st.Detached {
		c.reaped.Wait() // every process is dead: the reapers return at once
	}
	for _, f := range []string{"state.json", "roster", "known_hosts", "key", "key.pub"} {
		if err := os.Remove(filepath.Join(c.st.Dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close cluster %d: %w", c.st.Cluster, err)
	}
	return nil
}

// host returns the state of host id.
func (c *Cluster) host(id string) (*hostState, error) {
	i := hostIndex(id)
	if i < 1 || i > len(c.st.Hosts) {
		return nil, fmt.Errorf("%s: %w", id, ErrNoHost)
	}
	return c.st.Hosts[i-1], nil
}

func (c *Cluster) lockHost(h *hostState) func() {
	c.hostMu[h.Index-1].Lock()
	return c.hostMu[h.Index-1].Unlock
}

// addrString is the host:port of h for known_hosts: bare IP on port 22.
func knownHostsName(h *hostState) string {
	if h.Port == 22 {
		return h.IP
	}
	return "[" + h.IP + "]:" + strconv.Itoa(h.Port)
}
