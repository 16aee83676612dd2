package sshconn

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

// certHost starts a server presenting a host certificate signed by ca for
// 127.0.0.1.
func certHost(t *testing.T, ca ssh.Signer) *fixture {
	t.Helper()
	hostKey := sshtest.GenerateKey(t)
	cert := sshtest.SignHostCert(t, ca, hostKey.PublicKey(), "127.0.0.1")
	cs, err := ssh.NewCertSigner(cert, hostKey)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, sshtest.Options{HostKey: cs})
	writeFile(t, f.cfg.KnownHostsFile, "")
	return f
}

func TestHostCertificate(t *testing.T) {
	ca := sshtest.GenerateKey(t)
	// x/crypto's knownhosts compares ports exactly ([host]:* is not a
	// pattern there), so the line names the server's port.
	caLine := func(f *fixture) string {
		return "@cert-authority 127.0.0.1,[127.0.0.1]:" + strconv.Itoa(f.srv.Port()) + " " + string(ssh.MarshalAuthorizedKey(ca.PublicKey()))
	}
	t.Run("trusted CA in the user file", func(t *testing.T) {
		f := certHost(t, ca)
		writeFile(t, f.cfg.KnownHostsFile, caLine(f))
		f.dial(t).Close()
	})
	t.Run("trusted CA in a global file, user file untouched", func(t *testing.T) {
		f := certHost(t, ca)
		global := filepath.Join(t.TempDir(), "ssh_known_hosts")
		writeFile(t, global, caLine(f))
		f.cfg.GlobalKnownHostsFiles = []string{global, global + ".missing"}
		f.cfg.HostKey = HostKeyAcceptNew
		f.dial(t).Close()
		if got := string(mustRead(t, f.cfg.KnownHostsFile)); got != "" {
			t.Errorf("user known_hosts written: %q", got)
		}
	})
	t.Run("unknown CA is an unknown host", func(t *testing.T) {
		f := certHost(t, ca)
		other := sshtest.GenerateKey(t)
		writeFile(t, f.cfg.KnownHostsFile, "@cert-authority * "+string(ssh.MarshalAuthorizedKey(other.PublicKey())))
		_, err := Dial(context.Background(), f.cfg)
		if !errors.Is(err, ErrHostKeyUnknown) {
			t.Fatalf("Dial error = %v, want ErrHostKeyUnknown", err)
		}
	})
	t.Run("CA line for a host without a certificate", func(t *testing.T) {
		// x/crypto's knownhosts wants the CA key for plain keys too; that
		// must read as unknown, not as a changed key.
		f := newFixture(t, sshtest.Options{})
		writeFile(t, f.cfg.KnownHostsFile, caLine(f))
		_, err := Dial(context.Background(), f.cfg)
		if !errors.Is(err, ErrHostKeyUnknown) {
			t.Fatalf("Dial error = %v, want ErrHostKeyUnknown", err)
		}
		f.cfg.HostKey = HostKeyAcceptNew
		f.dial(t).Close()
	})
	t.Run("accept-new records the certified key", func(t *testing.T) {
		f := certHost(t, ca)
		f.cfg.HostKey = HostKeyAcceptNew
		f.dial(t).Close()
		f.cfg.HostKey = HostKeyStrict
		f.dial(t).Close()
		if got := string(mustRead(t, f.cfg.KnownHostsFile)); strings.Contains(got, "cert") || strings.Count(got, "\n") != 1 {
			t.Errorf("known_hosts = %q, want one plain key line", got)
		}
	})
}

func TestHashedKnownHosts(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	line := knownhosts.HashHostname(knownhosts.Normalize(f.srv.Addr())) + " " + string(ssh.MarshalAuthorizedKey(f.srv.HostKey()))
	writeFile(t, f.cfg.KnownHostsFile, line)
	f.dial(t).Close()
}
