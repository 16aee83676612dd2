package crypt

import (
	"bytes"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestCrypticleErrors(t *testing.T) {
	c, err := NewCrypticle(vecCrypticle)
	must(t, err)
	other, err := NewCrypticle(GenerateKeyString())
	must(t, err)
	good, err := c.Dumps(ordered.FromPairs("a", 1), vecNonce)
	must(t, err)
	flipped := append([]byte(nil), good...)
	flipped[20] ^= 1
	tests := []struct {
		name  string
		c     *Crypticle
		data  []byte
		nonce string
		want  error
	}{
		{"wrong key", other, good, vecNonce, ErrAuthentication},
		{"tampered", c, flipped, vecNonce, ErrAuthentication},
		{"short", c, good[:10], "", ErrAuthentication},
		{"wrong nonce", c, good, "ffffffffffffffffffffffffffffffff", ErrNonce},
		{"iv only", c, c.encryptIVForTest(), "", ErrDecrypt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.c.Loads(tc.data, tc.nonce); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// encryptIVForTest returns an authenticated message with no ciphertext.
func (c *Crypticle) encryptIVForTest() []byte {
	body := make([]byte, 16)
	mac := hmac.New(sha256.New, c.hmacKey)
	mac.Write(body)
	return mac.Sum(body)
}

func TestCrypticleSemantics(t *testing.T) {
	c, err := NewCrypticle(vecCrypticle)
	must(t, err)
	// No pickle prefix: Salt returns an empty dict.
	v, err := c.Loads(c.Encrypt([]byte("not pickled")), "")
	must(t, err)
	if m, ok := v.(*ordered.Map); !ok || m.Len() != 0 {
		t.Errorf("unprefixed = %#v, want empty map", v)
	}
	// Serials must increase.
	for i, tc := range []struct {
		serial int
		empty  bool
	}{{5, false}, {5, true}, {4, true}, {6, false}} {
		blob, err := c.Dumps(ordered.FromPairs("x", i, "serial", tc.serial), "")
		must(t, err)
		v, err := c.Loads(blob, "")
		must(t, err)
		m := v.(*ordered.Map)
		if (m.Len() == 0) != tc.empty || m.Has("serial") {
			t.Errorf("serial %d: got %v", tc.serial, m.Keys())
		}
	}
	if _, err := NewCrypticle("c2hvcnQ="); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("short key: %v", err)
	}
	if ks := GenerateKeyString(); len(ks) != 76 {
		t.Errorf("key string %q has length %d, want 76", ks, len(ks))
	}
}

func TestAlgorithms(t *testing.T) {
	goKey, _ := testKeys(t)
	if _, err := Encrypt(&goKey.PublicKey, []byte("x"), "OAEP-SHA256"); !errors.Is(err, ErrUnsupportedAlgorithm) {
		t.Errorf("Encrypt: %v", err)
	}
	if _, err := Sign(goKey, []byte("x"), "PSS-SHA1"); !errors.Is(err, ErrUnsupportedAlgorithm) {
		t.Errorf("Sign: %v", err)
	}
	sig, err := Sign(goKey, []byte("x"), PKCS1v15SHA224)
	must(t, err)
	if err := Verify(&goKey.PublicKey, []byte("y"), sig, PKCS1v15SHA224); !errors.Is(err, ErrVerify) {
		t.Errorf("Verify wrong message: %v", err)
	}
	x, err := PrivateEncrypt(goKey, []byte("salt"))
	must(t, err)
	x[len(x)-1] ^= 1
	if _, err := PublicDecrypt(&goKey.PublicKey, x); !errors.Is(err, ErrVerify) {
		t.Errorf("PublicDecrypt tampered: %v", err)
	}
	if _, err := PrivateEncrypt(goKey, make([]byte, 255)); err == nil {
		t.Errorf("PrivateEncrypt accepted an oversize message")
	}
	if _, err := Decrypt(goKey, []byte("junk"), OAEPSHA1); !errors.Is(err, ErrDecrypt) {
		t.Errorf("Decrypt junk: %v", err)
	}
}

func TestCleanKeyAndFinger(t *testing.T) {
	pub, err := os.ReadFile("testdata/go_key.pub")
	must(t, err)
	crlf := bytes.ReplaceAll(pub, []byte("\n"), []byte("\r\n"))
	crlf = append([]byte("\r\n  \r\n"), crlf...)
	if !bytes.Equal(PemBody(crlf), PemBody(pub)) {
		t.Errorf("PemBody differs for CRLF and blank lines")
	}
	if got, want := CleanKey(string(crlf)), string(bytes.TrimSpace(pub)); got != want {
		t.Errorf("CleanKey = %q, want %q", got, want)
	}
	if f, err := PemFinger(filepath.Join(t.TempDir(), "none"), "sha256"); f != "" || err != nil {
		t.Errorf("missing file: %q, %v", f, err)
	}
	if _, err := Finger(nil, "whirlpool"); !errors.Is(err, ErrUnsupportedAlgorithm) {
		t.Errorf("bad hash: %v", err)
	}
}

func TestGenKeys(t *testing.T) {
	dir := t.TempDir()
	priv, err := GenKeys(dir, "master", 2048)
	must(t, err)
	for name, perm := range map[string]os.FileMode{"master.pem": PrivateKeyPerm, "master.pub": PublicKeyPerm} {
		st, err := os.Stat(filepath.Join(dir, name))
		must(t, err)
		if st.Mode().Perm() != perm {
			t.Errorf("%s mode %o, want %o", name, st.Mode().Perm(), perm)
		}
	}
	k, err := LoadPrivateKey(priv, "")
	must(t, err)
	pub, err := LoadPublicKey(filepath.Join(dir, "master.pub"))
	must(t, err)
	if !k.PublicKey.Equal(pub) {
		t.Errorf("public key does not match private key")
	}
	before, _ := os.ReadFile(priv)
	if _, err := GenKeys(dir, "master", 2048); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(priv); !bytes.Equal(before, after) {
		t.Errorf("GenKeys replaced an existing key")
	}
	if _, err := ParsePublicKey([]byte("garbage")); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("ParsePublicKey garbage: %v", err)
	}
}

func TestPassphraseKey(t *testing.T) {
	_, pyKey := testKeys(t)
	data, err := os.ReadFile("testdata/py_key_pass.pem")
	must(t, err)
	k, err := ParsePrivateKey(data, "brine-pass")
	must(t, err)
	if !k.Equal(pyKey) {
		t.Errorf("decrypted key differs")
	}
	for _, pass := range []string{"", "wrong"} {
		if _, err := ParsePrivateKey(data, pass); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("pass %q: %v", pass, err)
		}
	}
}

func TestKeyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m1")
	ks, err := WriteKeyFile(p)
	must(t, err)
	st, err := os.Stat(p)
	must(t, err)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %o", st.Mode().Perm())
	}
	got, err := ReadKeyFile(p)
	if err != nil || got != ks {
		t.Errorf("ReadKeyFile = %q, %v", got, err)
	}
	if _, err := NewCrypticle(got); err != nil {
		t.Error(err)
	}
}

func TestGenSignature(t *testing.T) {
	goKey, pyKey := testKeys(t)
	dir := t.TempDir()
	must(t, WriteFileAtomic(filepath.Join(dir, "master_sign.pem"), EncodePrivateKey(goKey), 0o400))
	pubText := string(EncodePublicKey(&pyKey.PublicKey))
	must(t, WriteFileAtomic(filepath.Join(dir, "master.pub"), []byte(pubText), 0o644))
	sigPath := filepath.Join(dir, MasterPubkeySignature)
	ok, err := GenSignature(filepath.Join(dir, "master_sign.pem"), filepath.Join(dir, "master.pub"), sigPath, "")
	if !ok || err != nil {
		t.Fatalf("GenSignature = %v, %v", ok, err)
	}
	sig, err := os.ReadFile(sigPath)
	must(t, err)
	if err := VerifyPubSig(&goKey.PublicKey, pubText, string(sig), PKCS1v15SHA1); err != nil {
		t.Errorf("VerifyPubSig: %v", err)
	}
	if err := VerifyPubSig(&pyKey.PublicKey, pubText, string(sig), PKCS1v15SHA1); !errors.Is(err, ErrVerify) {
		t.Errorf("wrong signing key: %v", err)
	}
	if ok, err := GenSignature(filepath.Join(dir, "master_sign.pem"), filepath.Join(dir, "master.pub"), sigPath, ""); ok || err != nil {
		t.Errorf("second GenSignature = %v, %v", ok, err)
	}
}

// TestPrivateEncryptCRT checks that the CRT path and the direct exponent
// give the same X9.31 signature (the padding is deterministic), for a key
// with and without its precomputed CRT values.
func TestPrivateEncryptCRT(t *testing.T) {
	goKey, _ := testKeys(t)
	bare := &rsa.PrivateKey{PublicKey: goKey.PublicKey, D: goKey.D, Primes: goKey.Primes}
	for _, msg := range [][]byte{[]byte("salt"), AESDigest([]byte("k")), {0}} {
		crt, err := PrivateEncrypt(goKey, msg)
		must(t, err)
		direct, err := PrivateEncrypt(bare, msg)
		must(t, err)
		if !bytes.Equal(crt, direct) {
			t.Errorf("%q: CRT and direct signatures differ", msg)
		}
		back, err := PublicDecrypt(&goKey.PublicKey, crt)
		must(t, err)
		if !bytes.Equal(back, msg) {
			t.Errorf("%q: recovered %q", msg, back)
		}
	}
}
