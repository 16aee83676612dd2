package sshconn

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

// FuzzKnownHostsCertAuthority reads known_hosts text with @cert-authority
// (and @revoked, hashed, plain) lines and checks a host certificate and a
// plain key against it: it must not panic, and trust needs a line that
// names the CA or the key.
func FuzzKnownHostsCertAuthority(f *testing.F) {
	ca, host := sshtest.GenerateKey(f), sshtest.GenerateKey(f)
	caLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ca.PublicKey())))
	hostLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(host.PublicKey())))
	for _, s := range []string{
		"@cert-authority 127.0.0.1 " + caLine,
		"@cert-authority * " + caLine + "\n@revoked * " + hostLine,
		"@cert-authority\n@cert-authority *\n@cert-authority * ssh-ed25519\n@cert-authority * ssh-ed25519 AAAA",
		"  @cert-authority *.example.com,!127.0.0.1 " + caLine + " comment",
		"|1|c2FsdA==|aGFzaA== " + hostLine,
		"127.0.0.1 " + hostLine + "\n@cert-authority [127.0.0.1]:22 " + caLine,
		"@CERT-AUTHORITY * " + caLine, "@cert-authority\t*\t" + caLine, "",
	} {
		f.Add(s)
	}
	cert := sshtest.SignHostCert(f, ca, host.PublicKey(), "127.0.0.1")
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 22}
	f.Fuzz(func(t *testing.T, data string) {
		file := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := &Config{Host: "127.0.0.1", Port: 22, KnownHostsFile: file, HostKey: HostKeyStrict}
		h, err := newHostKeys(cfg)
		if err != nil {
			return
		}
		known, isCA := h.knownKeys()
		hostKeyAlgorithms(known, isCA)
		for _, key := range []ssh.PublicKey{cert, host.PublicKey()} {
			if h.callback("127.0.0.1:22", remote, key) == nil && !strings.Contains(data, "AAAA") {
				t.Fatalf("%s trusted by a file with no key in it: %q", key.Type(), data)
			}
		}
	})
}
