package master

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
)

// TestSigningKeyPass: with signing_key_pass the master makes its
// signing key encrypted with it, signs with it, and refuses to start
// with a wrong passphrase or an sdb:// one, naming the key file — the
// passphrase itself never appears in an error.
func TestSigningKeyPass(t *testing.T) {
	o := tempOptions(t)
	if err := os.MkdirAll(o.PKIDir, 0o700); err != nil {
		t.Fatal(err)
	}
	const pass = "hunter2-sign"
	o.Raw = ordered.FromPairs("master_sign_pubkey", true, "signing_key_pass", pass)
	mk, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	pub := string(crypt.EncodePublicKey(&mk.PublicKey))
	sig, err := pubSignature(o, pub)
	if err != nil {
		t.Fatal(err)
	}
	signPath := filepath.Join(o.PKIDir, "master_sign.pem")
	if _, err := crypt.LoadPrivateKey(signPath, ""); err == nil {
		t.Fatal("master_sign.pem was written unencrypted")
	}
	k, err := crypt.LoadPrivateKey(signPath, pass)
	if err != nil {
		t.Fatal(err)
	}
	if err := crypt.VerifyPubSig(&k.PublicKey, crypt.CleanKey(pub), sig, crypt.PKCS1v15SHA1); err != nil {
		t.Errorf("signature: %v", err)
	}
	// The key exists now: a second start reads it with the passphrase.
	if again, err := pubSignature(o, pub); err != nil || again == "" {
		t.Errorf("restart: %q %v", again, err)
	}
	for _, tc := range []struct {
		pass any
		want string
	}{
		{"wrong", "passphrase may be incorrect"},
		{nil, "passphrase may be incorrect"},
		{"sdb://vault/sign", "sdb://"},
	} {
		o.Raw = ordered.FromPairs("master_sign_pubkey", true, "signing_key_pass", tc.pass)
		_, err := pubSignature(o, pub)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), pass) {
			t.Errorf("signing_key_pass %v: %v", tc.pass, err)
		}
		if tc.want != "sdb://" && !strings.Contains(err.Error(), signPath) {
			t.Errorf("the error does not name %s: %v", signPath, err)
		}
	}
	o.Raw = ordered.FromPairs("master_sign_pubkey", true, "signing_key_pass", "sdb://x/y")
	if _, err := pubSignature(o, pub); !errors.Is(err, crypt.ErrSDBUnsupported) {
		t.Errorf("sdb: %v", err)
	}
}

// TestKeyPass: with key_pass the master makes master.pem encrypted with
// it and signs in with it; a restart reads it again, and a wrong or
// missing passphrase stops the master with an error that names the key
// file and not the passphrase (salt/crypt.py MasterKeys.__get_keys).
func TestKeyPass(t *testing.T) {
	o := tempOptions(t)
	const pass = "hunter2-master"
	o.Raw = ordered.FromPairs("key_pass", pass)
	m, err := New(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	pem := filepath.Join(o.PKIDir, "master.pem")
	if _, err := crypt.LoadPrivateKey(pem, ""); err == nil {
		t.Fatal("master.pem was written unencrypted")
	}
	k, err := crypt.LoadPrivateKey(pem, pass)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Equal(m.key) {
		t.Error("the master runs with a key other than master.pem's")
	}
	if _, err := New(o, nil); err != nil {
		t.Errorf("restart with key_pass: %v", err)
	}
	for _, wrong := range []any{"wrong", nil} {
		o.Raw = ordered.FromPairs("key_pass", wrong)
		_, err := New(o, nil)
		if err == nil || !strings.Contains(err.Error(), "passphrase may be incorrect") ||
			!strings.Contains(err.Error(), pem) || strings.Contains(err.Error(), pass) {
			t.Errorf("key_pass %v: %v", wrong, err)
		}
	}
	o.Raw = ordered.FromPairs("key_pass", "sdb://vault/master")
	if _, err := New(o, nil); !errors.Is(err, crypt.ErrSDBUnsupported) {
		t.Errorf("sdb: %v", err)
	}
}
