package testhosts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RequireEnv names the environment variable that turns New's skip (no sshd)
// into a test failure. CI sets BRINE_REQUIRE_HOSTS=1 so that a
// machine without test hosts can never pass silently.
const RequireEnv = "BRINE_REQUIRE_HOSTS"

// Option adjusts the Config used by New.
type Option func(*Config)

// WithDefaults sets the HostOptions of every host not named by WithHost.
func WithDefaults(o HostOptions) Option { return func(c *Config) { c.Defaults = o } }

// WithHost sets the HostOptions of one host ("host2").
func WithHost(id string, o HostOptions) Option {
	return func(c *Config) {
		if c.Hosts == nil {
			c.Hosts = map[string]HostOptions{}
		}
		c.Hosts[id] = o
	}
}

// WithMode forces a networking mode.
func WithMode(m Mode) Option { return func(c *Config) { c.Mode = m } }

// WithUser sets the login user and its password.
func WithUser(name, password string) Option {
	return func(c *Config) { c.User, c.Password = name, password }
}

// New starts an n-host cluster for a test and tears it down in t.Cleanup.
// What the cluster needs is checked first, and a machine that cannot give
// it skips the test through Skip (a failure with BRINE_REQUIRE_HOSTS=1):
// no sshd installed; ModeNetns (asked for with WithMode, or implied by a
// BehindHost) without the privileges for network namespaces; HostOptions
// that need root without root. With BRINE_REQUIRE_HOSTS=1 the default mode
// needs network namespaces too, so CI never passes on a quiet loopback
// fallback; a test that means loopback asks for it with WithMode. Any
// other start error fails the test.
func New(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	cfg := Config{N: n, Logf: t.Logf}
	for _, o := range opts {
		o(&cfg)
	}
	if why := unavailable(cfg, os.Getenv(RequireEnv) == "1"); why != "" {
		Skip(t, why)
	}
	// A host takes about 90 ms to boot on two busy cores: allow for
	// large clusters.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute+time.Duration(n)*200*time.Millisecond)
	defer cancel()
	c, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start test hosts: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute+time.Duration(n)*100*time.Millisecond)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("close test hosts: %v", err)
		}
	})
	if cfg.Mode == ModeAuto && c.Mode() != ModeNetns && os.Getenv(RequireEnv) == "1" {
		t.Fatalf("testhosts: cluster fell back to %s mode and %s=1 requires network namespaces", c.Mode(), RequireEnv)
	}
	return c
}

// Skip is the one way an end-to-end test gives up because this machine
// lacks what it needs (sshd, root, network namespaces, a tool): it prints
// why loudly on stderr and skips t, or, when BRINE_REQUIRE_HOSTS=1 (as
// `make test` and CI set it), fails t instead, so a green run always means
// the end-to-end tests ran. Never call t.Skip directly in such a test.
func Skip(t testing.TB, why string) {
	t.Helper()
	msg := fmt.Sprintf("testhosts: NOT RUN: %s; end-to-end test %s NOT RUN. "+
		"Run scripts/install-deps.sh as root; set %s=1 to make this a failure.", why, t.Name(), RequireEnv)
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg)
	}
	fmt.Fprintln(os.Stderr, "!!! "+msg)
	t.Skip(msg)
}

// RequireRoot skips t through Skip unless the test runs as root.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, fmt.Sprintf("needs root (%s)", why))
	}
}

// RequireNetns skips t through Skip unless this machine can give ModeNetns
// clusters (root with CAP_NET_ADMIN and CAP_SYS_ADMIN, and ip(8)).
func RequireNetns(t testing.TB, why string) {
	t.Helper()
	if reason := netnsUnavailable(); reason != "" {
		Skip(t, fmt.Sprintf("needs network namespaces (%s): %s", why, reason))
	}
}

// unavailable says why this machine cannot run the cluster cfg describes,
// or "". strict (BRINE_REQUIRE_HOSTS=1) makes ModeAuto need namespaces.
func unavailable(cfg Config, strict bool) string {
	if _, err := findSSHD(); errors.Is(err, ErrNoSSHD) {
		return "NO TEST HOSTS: no sshd binary"
	}
	if cfg.needsNetns() || (strict && cfg.Mode == ModeAuto) {
		if reason := netnsUnavailable(); reason != "" {
			return "network namespaces: " + reason
		}
	}
	if os.Geteuid() != 0 {
		for i := 1; i <= cfg.N; i++ {
			if cfg.options(hostID(i)).needsRoot() {
				return fmt.Sprintf("the options of %s need root", hostID(i))
			}
		}
	}
	return ""
}

// Capability bits of /proc/self/status CapEff (linux/capability.h).
const (
	capNetAdmin = 12
	capSysAdmin = 21
)

// netnsUnavailable says why ModeNetns clusters cannot be made here, or "".
func netnsUnavailable() string {
	if os.Geteuid() != 0 {
		return fmt.Sprintf("running as uid %d, not root", os.Geteuid())
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "no ip(8) (iproute2)"
	}
	caps, err := effectiveCaps()
	if err != nil {
		return err.Error()
	}
	for _, c := range []struct {
		bit  uint
		name string
	}{{capNetAdmin, "CAP_NET_ADMIN"}, {capSysAdmin, "CAP_SYS_ADMIN"}} {
		if caps&(1<<c.bit) == 0 {
			return "no " + c.name
		}
	}
	return ""
}

// effectiveCaps reads the CapEff mask of this process.
func effectiveCaps() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read capabilities: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("parse CapEff %q: %w", v, err)
			}
			return n, nil
		}
	}
	return 0, errors.New("no CapEff in /proc/self/status")
}

// Eventually polls cond every 250ms until it holds, failing t with what
// once timeout has passed: for end-to-end tests that wait on daemons the
// hosts run (a minion signing in, a queued return arriving).
func Eventually(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
