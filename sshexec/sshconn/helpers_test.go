package sshconn

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixture is a test server plus a client config that can reach it.
type fixture struct {
	srv *sshtest.Server
	cfg Config
}

// newFixture starts a server trusting a fresh client key and returns a
// Config for it whose known_hosts file (in a temp dir) already holds the
// server key, unless opts say otherwise via the caller editing cfg.
func newFixture(t *testing.T, opts sshtest.Options) *fixture {
	t.Helper()
	client := sshtest.GenerateKey(t)
	opts.AuthorizedKeys = append(opts.AuthorizedKeys, client.PublicKey())
	srv := sshtest.New(t, opts)
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(srv.KnownHostsLine()), 0o600); err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, cfg: Config{
		Host: srv.Host(), Port: srv.Port(), User: "tester",
		Signers: []ssh.Signer{client}, KnownHostsFile: kh,
		GlobalKnownHostsFiles: []string{}, // not the machine's
		Timeout:               10 * time.Second,
	}}
}

func (f *fixture) dial(t *testing.T) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), f.cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// keyFile writes an ed25519 key no test server trusts unless told.
func keyFile(t *testing.T) string {
	path, _ := sshtest.KeyFile(t)
	return path
}
