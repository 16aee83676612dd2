package sshconn

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
)

func TestEnsureKey(t *testing.T) {
	pki := filepath.Join(t.TempDir(), "pki", "master")
	priv, err := EnsureKey(pki)
	if err != nil {
		t.Fatalf("EnsureKey: %v", err)
	}
	if want := filepath.Join(pki, "ssh", "salt-ssh.rsa"); priv != want {
		t.Fatalf("EnsureKey = %q, want %q", priv, want)
	}
	for path, mode := range map[string]os.FileMode{
		filepath.Dir(priv): 0o700 | os.ModeDir, priv: 0o600, priv + ".pub": 0o644,
	} {
		if st, err := os.Stat(path); err != nil || st.Mode() != mode {
			t.Errorf("%s: %v, %v; want mode %v", path, st.Mode(), err, mode)
		}
	}
	signers, err := LoadSigners([]string{priv}, nil)
	if err != nil {
		t.Fatalf("LoadSigners: %v", err)
	}
	pubData, _ := os.ReadFile(priv + ".pub")
	pub, _, _, _, err := ssh.ParseAuthorizedKey(pubData)
	if err != nil || !bytes.Equal(pub.Marshal(), signers[0].PublicKey().Marshal()) {
		t.Fatalf(".pub does not match the private key: %v", err)
	}
	if pub.Type() != ssh.KeyAlgoRSA || pub.(ssh.CryptoPublicKey).CryptoPublicKey().(*rsa.PublicKey).N.BitLen() != KeyBits {
		t.Errorf("key is %s, want %d-bit RSA", pub.Type(), KeyBits)
	}

	before, _ := os.ReadFile(priv)
	if again, err := EnsureKey(pki); err != nil || again != priv {
		t.Fatalf("second EnsureKey = %q, %v", again, err)
	}
	if after, _ := os.ReadFile(priv); !bytes.Equal(before, after) {
		t.Error("second EnsureKey replaced the key")
	}

	os.Remove(priv + ".pub")
	if _, err := EnsureKey(pki); err != nil {
		t.Fatalf("EnsureKey without .pub: %v", err)
	}
	if rebuilt, _ := os.ReadFile(priv + ".pub"); !bytes.Equal(rebuilt, pubData) {
		t.Errorf("rebuilt .pub = %q, want %q", rebuilt, pubData)
	}
}

func TestEnsureKeyConcurrent(t *testing.T) {
	pki := t.TempDir()
	var wg sync.WaitGroup
	pubs := make([][]byte, 8)
	for i := range pubs {
		wg.Go(func() {
			priv, err := EnsureKey(pki)
			if err != nil {
				t.Error(err)
				return
			}
			s, err := LoadSigners([]string{priv}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			pubs[i] = s[0].PublicKey().Marshal()
		})
	}
	wg.Wait()
	for i := range pubs {
		if !bytes.Equal(pubs[i], pubs[0]) {
			t.Fatalf("caller %d got a different key", i)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(pki, "ssh"))
	for _, e := range entries {
		switch e.Name() {
		case "salt-ssh.rsa", "salt-ssh.rsa.pub", ".salt-ssh.rsa.lock":
		default:
			t.Errorf("stray file %s", e.Name())
		}
	}
}

func TestLoadSigners(t *testing.T) {
	dir := t.TempDir()
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 1024)
	must := func(b *pem.Block, err error) *pem.Block {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(name string, block *pem.Block) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("id_ed25519", must(ssh.MarshalPrivateKey(edKey, "")))
	pkcs1 := write("id_rsa.pem", &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)})
	encrypted := write("id_enc", must(ssh.MarshalPrivateKeyWithPassphrase(edKey, "", []byte("open sesame"))))

	tests := []struct {
		name          string
		paths         []string
		pass          string
		wantPassErr   bool
		wantIncorrect bool
	}{
		{"openssh and pem", []string{plain, pkcs1}, "", false, false},
		{"encrypted with passphrase", []string{encrypted}, "open sesame", false, false},
		{"encrypted without passphrase", []string{plain, encrypted}, "", true, false},
		{"encrypted wrong passphrase", []string{encrypted}, "nope", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			signers, err := LoadSigners(tc.paths, []byte(tc.pass))
			var pe *PassphraseError
			if tc.wantPassErr {
				if !errors.As(err, &pe) || pe.Incorrect != tc.wantIncorrect || pe.Path != encrypted {
					t.Fatalf("LoadSigners error = %v, want *PassphraseError{Incorrect: %v}", err, tc.wantIncorrect)
				}
				return
			}
			if err != nil || len(signers) != len(tc.paths) {
				t.Fatalf("LoadSigners = %d signers, %v", len(signers), err)
			}
		})
	}
	if _, err := LoadSigners([]string{filepath.Join(dir, "missing")}, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing key error = %v, want os.ErrNotExist", err)
	}
}
