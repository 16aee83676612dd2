package sshconn

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

// startAgent serves an in-process keyring holding keys on a unix socket
// and returns the socket path.
func startAgent(t *testing.T, keys ...any) string {
	t.Helper()
	ring := agent.NewKeyring()
	for _, k := range keys {
		if err := ring.Add(agent.AddedKey{PrivateKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				agent.ServeAgent(ring, c)
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return sock
}

func newEd25519(t *testing.T) (ed25519.PrivateKey, ssh.Signer) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return priv, s
}

// encryptedKeyFile writes priv encrypted with pass, and its .pub.
func encryptedKeyFile(t *testing.T, priv ed25519.PrivateKey, pass string) string {
	t.Helper()
	blk, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "enc", []byte(pass))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ssh.NewSignerFromKey(priv)
	p := filepath.Join(t.TempDir(), "id_enc")
	writeFile(t, p, string(pem.EncodeToMemory(blk)))
	writeFile(t, p+".pub", string(ssh.MarshalAuthorizedKey(s.PublicKey())))
	return p
}

func TestAgentAuth(t *testing.T) {
	trustedPriv, trusted := newEd25519(t)
	otherPriv, _ := newEd25519(t)
	unrelatedKey := keyFile(t) // not authorized, not in the agent
	tests := []struct {
		name    string
		keys    []any
		cfg     func(c *Config, sock string)
		wantErr func(error) bool
	}{
		{"agent only", []any{otherPriv, trustedPriv}, func(c *Config, sock string) {
			c.AgentSocket = sock
		}, nil},
		{"agent after a rejected key file", []any{trustedPriv}, func(c *Config, sock string) {
			c.AgentSocket, c.Priv = sock, []string{unrelatedKey}
		}, nil},
		{"IdentitiesOnly filters agent keys", []any{trustedPriv}, func(c *Config, sock string) {
			c.AgentSocket, c.Priv, c.IdentitiesOnly = sock, []string{unrelatedKey}, true
		}, func(err error) bool { return errors.Is(err, ErrAuthFailed) }},
		{"agent without keys", nil, func(c *Config, sock string) {
			c.AgentSocket = sock
		}, func(err error) bool {
			var ae *AgentError
			return errors.Is(err, ErrNoAgentKeys) && errors.As(err, &ae)
		}},
		{"agent socket gone", nil, func(c *Config, sock string) {
			c.AgentSocket = sock + ".missing"
		}, func(err error) bool { var ae *AgentError; return errors.As(err, &ae) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{trusted.PublicKey()}})
			f.cfg.Signers = nil
			tc.cfg(&f.cfg, startAgent(t, tc.keys...))
			c, err := Dial(context.Background(), f.cfg)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
			}
			if !tc.wantErr(err) {
				t.Fatalf("Dial error = %v", err)
			}
		})
	}
}

func TestIdentitiesOnlyKeepsConfiguredAgentKey(t *testing.T) {
	// The key file is encrypted and no passphrase is given, but the agent
	// holds it: OpenSSH signs with the agent, and so do we, even with
	// IdentitiesOnly (the agent key is a configured identity).
	priv, signer := newEd25519(t)
	otherPriv, _ := newEd25519(t)
	path := encryptedKeyFile(t, priv, "pass")
	f := newFixture(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}})
	f.cfg.Signers, f.cfg.Priv, f.cfg.IdentitiesOnly = nil, []string{path}, true
	f.cfg.AgentSocket = startAgent(t, otherPriv, priv)
	c := f.dial(t)
	if code, err := c.Run(context.Background(), "true", nil, nil, nil); code != 0 || err != nil {
		t.Fatalf("Run = %d, %v", code, err)
	}
	if got := f.srv.AuthAttempts(); len(got) != 1 {
		t.Errorf("auth attempts = %v, want only the configured key offered", got)
	}
}

func TestEncryptedKey(t *testing.T) {
	priv, signer := newEd25519(t)
	path := encryptedKeyFile(t, priv, "s3cret pass")
	unreadable := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name    string
		priv    string
		pass    string
		wantErr func(error) bool
	}{
		{"right passphrase", path, "s3cret pass", nil},
		{"no passphrase", path, "", func(err error) bool {
			var pe *PassphraseError
			return errors.As(err, &pe) && !pe.Incorrect
		}},
		{"wrong passphrase", path, "nope", func(err error) bool {
			var pe *PassphraseError
			return errors.As(err, &pe) && pe.Incorrect
		}},
		{"unreadable key", unreadable, "", func(err error) bool {
			var ke *KeyError
			return errors.As(err, &ke) && ke.Path == unreadable && errors.Is(err, fs.ErrNotExist)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}})
			f.cfg.Signers, f.cfg.Priv, f.cfg.PrivPassphrase = nil, []string{tc.priv}, []byte(tc.pass)
			c, err := Dial(context.Background(), f.cfg)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			if !tc.wantErr(err) {
				t.Fatalf("Dial error = %v", err)
			}
		})
	}
}

func TestUserCertificate(t *testing.T) {
	ca := sshtest.GenerateKey(t)
	path, signer := sshtest.KeyFile(t)
	cert := sshtest.SignUserCert(t, ca, signer.PublicKey(), "tester")
	certFile := filepath.Join(t.TempDir(), "elsewhere-cert.pub")
	writeFile(t, certFile, string(ssh.MarshalAuthorizedKey(cert)))
	tests := []struct {
		name  string
		setup func(c *Config)
	}{
		{"next to the key", func(c *Config) {
			writeFile(t, path+"-cert.pub", string(ssh.MarshalAuthorizedKey(cert)))
			t.Cleanup(func() { os.Remove(path + "-cert.pub") })
			c.Priv = []string{path}
		}},
		{"CertificateFile", func(c *Config) { c.Priv, c.CertificateFiles = []string{path}, []string{certFile} }},
		{"CertificateFile for an agent key", func(c *Config) {
			priv, _ := ssh.ParseRawPrivateKey(mustRead(t, path))
			c.AgentSocket, c.CertificateFiles = startAgent(t, priv), []string{certFile}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The server trusts the CA only, not the bare key.
			f := newFixture(t, sshtest.Options{UserCA: ca.PublicKey()})
			f.cfg.Signers = nil
			tc.setup(&f.cfg)
			f.dial(t).Close()
		})
	}
}

func TestKeyboardInteractivePassword(t *testing.T) {
	f := newFixture(t, sshtest.Options{Password: "kbd pass", KeyboardInteractive: true})
	f.cfg.Signers, f.cfg.Password = nil, "kbd pass"
	f.dial(t).Close()
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
