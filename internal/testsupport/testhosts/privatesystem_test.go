package testhosts_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestPrivateSystem checks that a PrivateSystem host writes /usr, /opt,
// /var/lib, /var/cache, /var/log and /run into its own overlays: the
// machine and a plain host beside it never see the files, the host sees
// the machine's own files through them, Salt's directories and
// /run/systemd are hidden, and /var/log/salt, unlike on a plain host, is
// an ordinary directory a purge can remove.
func TestPrivateSystem(t *testing.T) {
	testhosts.RequireRoot(t, "private overlays")
	if _, err := testhosts.Start(t.Context(), testhosts.Config{N: 1,
		Defaults: testhosts.HostOptions{PrivateSystem: true, NoPython: true}}); err == nil ||
		!strings.Contains(err.Error(), "PrivateSystem and NoPython") {
		t.Errorf("PrivateSystem with NoPython: %v, want a refusal", err)
	}
	c := testhosts.New(t, 2, testhosts.WithHost("host1", testhosts.HostOptions{PrivateSystem: true}))
	probes := []string{"/usr/share/brine-probe", "/opt/brine-probe", "/var/lib/brine-probe",
		"/var/cache/brine-probe", "/var/log/brine-probe", "/run/brine-probe"}
	var script strings.Builder
	for _, p := range probes {
		script.WriteString("echo private > " + p + " && ")
	}
	// host2, a plain host, has /var/cache/salt, /var/log/salt and /run/salt
	// made on the machine as its mount points; host1 sees none of them.
	script.WriteString("test ! -e /var/cache/salt && test ! -e /var/log/salt && test ! -e /run/salt && test ! -e /run/systemd && ")
	script.WriteString("mkdir /var/log/salt && test -x /usr/bin/dpkg && test -d /var/lib/dpkg/info")
	if out, err := c.Exec(t.Context(), "host1", script.String()); err != nil {
		t.Fatalf("write probes in host1: %v: %s", err, out)
	}
	for _, p := range probes {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written in host1 is on the machine: %v", p, err)
		}
		if out, err := c.Exec(t.Context(), "host2", "test ! -e "+p); err != nil {
			t.Errorf("%s written in host1 is on host2: %v: %s", p, err, out)
		}
	}
	if _, err := c.HostPath("host1", "/var/log/salt"); !errors.Is(err, testhosts.ErrNotPrivate) {
		t.Errorf("HostPath(/var/log/salt) on a PrivateSystem host: %v, want ErrNotPrivate", err)
	}
	if _, err := c.HostPath("host1", "/etc/salt/minion"); err != nil {
		t.Errorf("HostPath(/etc/salt/minion): %v", err)
	}
}
