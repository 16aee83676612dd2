package sshconn

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

// indexAddrs are the addresses every comparison asks about.
var indexAddrs = []string{"10.0.0.1:22", "10.0.0.1:2222", "host1:22", "[fe80::1]:22", "HOST1:22", "10.0.0.2:22"}

// sameAnswers checks that the index and x/crypto's database answer alike
// for every address and key: accepted by both, or the same wanted keys.
func sameAnswers(t *testing.T, file string, keys []ssh.PublicKey) {
	t.Helper()
	ix, ok := indexKnownHosts([]string{file})
	if !ok {
		return
	}
	ref, err := knownhosts.New(file)
	if err != nil {
		t.Fatalf("index accepted what x/crypto refuses: %v", err)
	}
	remote := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9), Port: 22}
	for _, a := range indexAddrs {
		for _, k := range keys {
			if got, want := describe(ix(a, remote, k)), describe(ref(a, remote, k)); got != want {
				t.Errorf("%s with %s: index %s, x/crypto %s", a, ssh.FingerprintSHA256(k), got, want)
			}
		}
	}
}

func describe(err error) string {
	var ke *knownhosts.KeyError
	if err == nil {
		return "accepted"
	}
	if !errors.As(err, &ke) {
		return "error"
	}
	var b strings.Builder
	for _, w := range ke.Want {
		fmt.Fprintf(&b, "%s:%d:%s ", filepath.Base(w.Filename), w.Line, ssh.FingerprintSHA256(w.Key))
	}
	return "want [" + b.String() + "]"
}

func TestKnownIndexMatchesXCrypto(t *testing.T) {
	k1, k2 := sshtest.GenerateKey(t).PublicKey(), sshtest.GenerateKey(t).PublicKey()
	l1 := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k1)))
	l2 := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k2)))
	for _, tc := range []struct {
		name    string
		body    string
		indexed bool
	}{
		{"one host", "10.0.0.1 " + l1 + "\n", true},
		{"two keys, comments, blank lines", "# c\n\n10.0.0.1 " + l1 + " me@x\n10.0.0.1,host1 " + l2 + "\n", true},
		{"ports", "[10.0.0.1]:2222 " + l1 + "\n10.0.0.1 " + l2 + "\n[fe80::1]:22 " + l1 + "\n", true},
		{"host:port without brackets", "host1:22 " + l1 + "\n", true},
		{"tabs and CRLF", "10.0.0.1\t" + l1 + "\r\n", true},
		{"wildcard goes to x/crypto", "10.0.0.* " + l1 + "\n", false},
		{"negation goes to x/crypto", "host1,!10.0.0.1 " + l1 + "\n", false},
		{"hashed goes to x/crypto", knownhosts.HashHostname("10.0.0.1") + " " + l1 + "\n", false},
		{"marker goes to x/crypto", "@revoked 10.0.0.1 " + l1 + "\n", false},
		{"bad line goes to x/crypto", "10.0.0.1 " + l1 + "\n10.0.0.2 ssh-ed25519 !!!\n", false},
		{"type mismatch goes to x/crypto", "10.0.0.1 ssh-rsa " + strings.Fields(l1)[1] + "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "known_hosts")
			if err := os.WriteFile(file, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, ok := indexKnownHosts([]string{file}); ok != tc.indexed {
				t.Fatalf("indexed = %v, want %v", ok, tc.indexed)
			}
			sameAnswers(t, file, []ssh.PublicKey{k1, k2})
		})
	}
}

// TestKnownIndexThousandHosts is the case the index is for: every host of
// a large known_hosts is found with its own key and no other.
func TestKnownIndexThousandHosts(t *testing.T) {
	keys := make([]ssh.PublicKey, 1000)
	var b bytes.Buffer
	for i := range keys {
		keys[i] = sshtest.GenerateKey(t).PublicKey()
		fmt.Fprintf(&b, "10.1.%d.%d %s", i/256, i%256, ssh.MarshalAuthorizedKey(keys[i]))
	}
	file := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ix, ok := indexKnownHosts([]string{file})
	if !ok {
		t.Fatal("a plain known_hosts was not indexed")
	}
	for i, k := range keys {
		addr := fmt.Sprintf("10.1.%d.%d:22", i/256, i%256)
		if err := ix(addr, nil, k); err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		var ke *knownhosts.KeyError
		if err := ix(addr, nil, keys[(i+1)%len(keys)]); !errors.As(err, &ke) || len(ke.Want) != 1 || ke.Want[0].Line != i+1 {
			t.Fatalf("%s with another host's key: %v", addr, err)
		}
	}
}

// FuzzKnownIndex feeds known_hosts text to the index: whenever it takes a
// file, its answers must be x/crypto's.
func FuzzKnownIndex(f *testing.F) {
	k1, k2 := sshtest.GenerateKey(f).PublicKey(), sshtest.GenerateKey(f).PublicKey()
	l1 := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k1)))
	l2 := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k2)))
	for _, s := range []string{
		"10.0.0.1 " + l1, "10.0.0.1,host1 " + l1 + "\n10.0.0.1 " + l2, "[10.0.0.1]:2222 " + l2,
		"host1:22 " + l1, "HOST1 " + l1, "[fe80::1]:22 " + l1, ",10.0.0.1, " + l1, "[10.0.0.1 " + l1,
		"10.0.0.1 " + l1 + " comment words\n#10.0.0.2 " + l2, "", "\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		file := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		sameAnswers(t, file, []ssh.PublicKey{k1, k2})
	})
}
