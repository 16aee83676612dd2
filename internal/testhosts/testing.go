package testhosts

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// WithUser sets the login user and its password (see Config.Password for
// why a custom password needs its own user).
func WithUser(name, password string) Option {
	return func(c *Config) { c.User, c.Password = name, password }
}

// New starts an n-host cluster for a test and tears it down in t.Cleanup.
// Without root it falls back to unisolated loopback hosts (see Start). When
// the machine cannot run hosts at all (no sshd installed) the test is skipped with a loud message on stderr, or fails when
// BRINE_REQUIRE_HOSTS=1. Any other start error fails the test.
func New(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	if reason := unavailable(); reason != "" {
		msg := fmt.Sprintf("testhosts: NO TEST HOSTS: %s; end-to-end test %s NOT RUN. "+
			"Run scripts/install-deps.sh as root; set %s=1 to make this a failure.", reason, t.Name(), RequireEnv)
		if os.Getenv(RequireEnv) == "1" {
			t.Fatal(msg)
		}
		fmt.Fprintln(os.Stderr, "!!! "+msg)
		t.Skip(msg)
	}
	cfg := Config{N: n, Logf: t.Logf}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start test hosts: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("close test hosts: %v", err)
		}
	})
	return c
}

// unavailable says why this machine cannot run test hosts, or "".
func unavailable() string {
	if _, err := findSSHD(); errors.Is(err, ErrNoSSHD) {
		return "no sshd binary"
	}
	return ""
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
