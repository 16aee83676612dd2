package crypt

import (
	"bytes"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// The cross-implementation vectors:
//
//	go test ./internal/crypt -run TestWriteGoVectors -update
//	/usr/bin/python3 testdata/vectors.py          # checks go_vectors.json, writes py_vectors.json
//	go test ./internal/crypt                       # checks both
//
// testdata/go_key.pem is the "minion" key (made by Go), testdata/py_key.pem
// the "master" key (made by Python's cryptography as Salt's gen_keys does).
var update = flag.Bool("update", false, "rewrite testdata/go_vectors.json")

const (
	vecMessage   = "Salt payload to protect"
	vecAESKey    = "aes-key-string-for-vectors"
	vecNonce     = "0123456789abcdef0123456789abcdef"
	vecSession   = "ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTlJWWl5iZmps="
	vecCrypticle = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc="
)

type vectors map[string]string

func readVectors(t *testing.T, name string) vectors {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	v := vectors{}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v vectors) bytes(t *testing.T, key string) []byte {
	t.Helper()
	h, ok := v[key]
	if !ok {
		t.Fatalf("vector %s missing", key)
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatalf("vector %s: %v", key, err)
	}
	return b
}

func testKeys(t *testing.T) (goKey, pyKey *rsa.PrivateKey) {
	t.Helper()
	var err error
	if goKey, err = LoadPrivateKey("testdata/go_key.pem", ""); err != nil {
		t.Fatal(err)
	}
	if pyKey, err = LoadPrivateKey("testdata/py_key.pem", ""); err != nil {
		t.Fatal(err)
	}
	return goKey, pyKey
}

func TestWriteGoVectors(t *testing.T) {
	if !*update {
		t.Skip("run with -update to regenerate testdata/go_vectors.json")
	}
	if _, err := os.Stat("testdata/go_key.pem"); errors.Is(err, os.ErrNotExist) {
		k, err := GenerateKey(2048)
		if err != nil {
			t.Fatal(err)
		}
		must(t, WriteFileAtomic("testdata/go_key.pem", EncodePrivateKey(k), 0o644))
		must(t, WriteFileAtomic("testdata/go_key.pub", EncodePublicKey(&k.PublicKey), 0o644))
	}
	goKey, pyKey := testKeys(t)
	v := vectors{}
	put := func(k string) func([]byte, error) {
		return func(b []byte, err error) {
			t.Helper()
			must(t, err)
			v[k] = hex.EncodeToString(b)
		}
	}
	put("oaep_sha1")(Encrypt(&pyKey.PublicKey, []byte(vecMessage), OAEPSHA1))
	put("oaep_sha224")(Encrypt(&pyKey.PublicKey, []byte(vecMessage), OAEPSHA224))
	put("pkcs1v15_sha1")(Sign(goKey, []byte(vecMessage), PKCS1v15SHA1))
	put("pkcs1v15_sha224")(Sign(goKey, []byte(vecMessage), PKCS1v15SHA224))
	put("x931_salt")(PrivateEncrypt(goKey, []byte("salt")))
	put("x931_digest")(PrivateEncrypt(goKey, AESDigest([]byte(vecAESKey))))
	c, err := NewCrypticle(vecCrypticle)
	must(t, err)
	put("crypticle_nonce")(c.Dumps(ordered.FromPairs("fun", "test.ping", "arg", []any{}, "n", 7), vecNonce))
	put("crypticle_plain")(c.Dumps([]any{"x", 1, nil}, ""))
	put("crypticle_raw")(c.Encrypt([]byte(vecMessage)), nil)
	finger, err := PemFinger("testdata/go_key.pub", "sha256")
	must(t, err)
	v["finger_sha256"] = finger
	finger, err = PemFinger("testdata/go_key.pub", "md5")
	must(t, err)
	v["finger_md5"] = finger

	// A minion's frames: _auth request (token for the master) and an
	// encrypted _return request under the session key.
	token := []byte(GenerateKeyString())
	v["auth_token_plain"] = hex.EncodeToString(token)
	encTok, err := Encrypt(&pyKey.PublicKey, token, OAEPSHA1)
	must(t, err)
	auth := &protocol.AuthRequest{ID: "minion1", Nonce: vecNonce, EncAlgo: OAEPSHA1, SigAlgo: PKCS1v15SHA1,
		Token: encTok, Pub: CleanKey(string(EncodePublicKey(&goKey.PublicKey)))}
	put("frame_auth_request")(protocol.Marshal(&protocol.Request{Enc: "clear", Load: auth, Version: 3}))
	tok, err := PrivateEncrypt(goKey, []byte("salt"))
	must(t, err)
	ret := (&protocol.Return{ID: "minion1", Success: true, Return: true, JID: "20261201013000123456",
		Fun: "test.ping"}).SaltMap()
	protocol.Stamp{Nonce: vecNonce, TS: 1796000000, Tok: tok, ID: "minion1"}.Apply(ret)
	encRet, err := c.Dumps(ret, "")
	must(t, err)
	put("frame_return_request")(protocol.Marshal(&protocol.Request{Enc: "aes", Load: encRet, Version: 3,
		ID: "minion1", EncAlgo: OAEPSHA1, SigAlgo: PKCS1v15SHA1}))

	// A master's (Go, with the "master" key) signed _auth reply and
	// send_private pillar reply to the minion.
	req := &protocol.AuthRequest{ID: "minion1", Nonce: vecNonce, EncAlgo: OAEPSHA1, SigAlgo: PKCS1v15SHA1,
		Token: mustEncrypt(t, &pyKey.PublicKey, token)}
	reply, err := BuildAuthReply(pyKey, &goKey.PublicKey, req, AuthKeys{AES: vecCrypticle, Session: vecSession},
		string(EncodePublicKey(&pyKey.PublicKey)), 4505)
	must(t, err)
	sc, err := SignClear(pyKey, reply, PKCS1v15SHA1)
	must(t, err)
	put("frame_go_auth_reply")(protocol.Marshal(sc))
	priv, err := SealPrivate(pyKey, &goKey.PublicKey, ordered.FromPairs("role", "web", "ports", []any{80, 443}),
		"pillar", vecNonce, OAEPSHA1, PKCS1v15SHA1)
	must(t, err)
	put("frame_go_private_reply")(protocol.Marshal(priv))

	data, err := json.MarshalIndent(v, "", " ")
	must(t, err)
	must(t, os.WriteFile("testdata/go_vectors.json", append(data, '\n'), 0o644))
}

func mustEncrypt(t *testing.T, pub *rsa.PublicKey, msg []byte) []byte {
	t.Helper()
	out, err := Encrypt(pub, msg, OAEPSHA1)
	must(t, err)
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestGoVectors checks what Go wrote (and Python verified) still holds:
// deterministic outputs are reproduced byte for byte, the rest decrypt.
func TestGoVectors(t *testing.T) {
	v := readVectors(t, "go_vectors.json")
	goKey, pyKey := testKeys(t)
	for _, algo := range []string{OAEPSHA1, OAEPSHA224} {
		name := map[string]string{OAEPSHA1: "oaep_sha1", OAEPSHA224: "oaep_sha224"}[algo]
		pt, err := Decrypt(pyKey, v.bytes(t, name), algo)
		if err != nil || string(pt) != vecMessage {
			t.Errorf("%s: %q, %v", name, pt, err)
		}
	}
	for name, algo := range map[string]string{"pkcs1v15_sha1": PKCS1v15SHA1, "pkcs1v15_sha224": PKCS1v15SHA224} {
		sig, err := Sign(goKey, []byte(vecMessage), algo)
		must(t, err)
		if !bytes.Equal(sig, v.bytes(t, name)) {
			t.Errorf("%s: signature changed", name)
		}
	}
	for name, msg := range map[string][]byte{"x931_salt": []byte("salt"), "x931_digest": AESDigest([]byte(vecAESKey))} {
		sig, err := PrivateEncrypt(goKey, msg)
		must(t, err)
		if !bytes.Equal(sig, v.bytes(t, name)) {
			t.Errorf("%s: X9.31 signature changed", name)
		}
	}
	if f, _ := PemFinger("testdata/go_key.pub", "sha256"); f != v["finger_sha256"] {
		t.Errorf("finger = %s, want %s", f, v["finger_sha256"])
	}
}

// TestPythonVectors decrypts and verifies what Python's cryptography,
// msgpack and OpenSSL (rsautl -x931, the call Salt makes) produced.
func TestPythonVectors(t *testing.T) {
	v := readVectors(t, "py_vectors.json")
	goKey, pyKey := testKeys(t)
	for name, algo := range map[string]string{"oaep_sha1": OAEPSHA1, "oaep_sha224": OAEPSHA224} {
		pt, err := Decrypt(goKey, v.bytes(t, name), algo)
		if err != nil || string(pt) != vecMessage {
			t.Errorf("%s: %q, %v", name, pt, err)
		}
	}
	for name, algo := range map[string]string{"pkcs1v15_sha1": PKCS1v15SHA1, "pkcs1v15_sha224": PKCS1v15SHA224} {
		if err := Verify(&pyKey.PublicKey, []byte(vecMessage), v.bytes(t, name), algo); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		sig, _ := Sign(pyKey, []byte(vecMessage), algo)
		if !bytes.Equal(sig, v.bytes(t, name)) {
			t.Errorf("%s: Go signs differently from cryptography", name)
		}
	}
	for name, msg := range map[string][]byte{"x931_salt": []byte("salt"), "x931_digest": AESDigest([]byte(vecAESKey))} {
		got, err := PublicDecrypt(&pyKey.PublicKey, v.bytes(t, name))
		if err != nil || !bytes.Equal(got, msg) {
			t.Errorf("%s: %q, %v", name, got, err)
		}
		sig, _ := PrivateEncrypt(pyKey, msg)
		if !bytes.Equal(sig, v.bytes(t, name)) {
			t.Errorf("%s: Go X9.31 signature differs from OpenSSL's", name)
		}
	}
	c, err := NewCrypticle(vecCrypticle)
	must(t, err)
	got, err := c.Loads(v.bytes(t, "crypticle_nonce"), vecNonce)
	must(t, err)
	if d := cmp.Diff(ordered.FromPairs("fun", "test.ping", "arg", []any{}, "n", 7), got, cmpOpts); d != "" {
		t.Errorf("crypticle_nonce (-want +got):\n%s", d)
	}
	raw, err := c.Decrypt(v.bytes(t, "crypticle_raw"))
	if err != nil || string(raw) != vecMessage {
		t.Errorf("crypticle_raw: %q, %v", raw, err)
	}
	for _, f := range []string{"finger_sha256", "finger_md5"} {
		h := map[string]string{"finger_sha256": "sha256", "finger_md5": "md5"}[f]
		if got, _ := PemFinger("testdata/py_key.pub", h); got != v[f] {
			t.Errorf("%s = %s, Python says %s", f, got, v[f])
		}
	}
	for _, f := range []string{"py_key.pem", "py_key.pub"} {
		data, _ := os.ReadFile(filepath.Join("testdata", f))
		var re []byte
		if f == "py_key.pem" {
			re = EncodePrivateKey(pyKey)
		} else {
			re = EncodePublicKey(&pyKey.PublicKey)
		}
		if !bytes.Equal(data, re) {
			t.Errorf("%s: Go re-encodes the key differently", f)
		}
	}
	testPythonFrames(t, v, goKey, pyKey, c)
}

// testPythonFrames follows a minion (Go) through the frames a master
// (Python) sent: the signed _auth reply and a publication.
func testPythonFrames(t *testing.T, v vectors, goKey, pyKey *rsa.PrivateKey, c *Crypticle) {
	t.Helper()
	outer, err := protocol.Unmarshal(v.bytes(t, "frame_auth_reply"))
	must(t, err)
	signed, _, err := protocol.DecodeSignedClear(outer)
	must(t, err)
	if err := Verify(&pyKey.PublicKey, signed.Load, signed.Sig, PKCS1v15SHA1); err != nil {
		t.Fatalf("auth reply signature: %v", err)
	}
	inner, err := protocol.Unmarshal(signed.Load)
	must(t, err)
	reply, err := protocol.ParseAuthReply(inner.(*ordered.Map))
	must(t, err)
	if reply.Nonce != vecNonce || reply.PublishPort != 4505 {
		t.Errorf("reply nonce %q port %d", reply.Nonce, reply.PublishPort)
	}
	aes, err := Decrypt(goKey, reply.AES, OAEPSHA1)
	must(t, err)
	digest, err := PublicDecrypt(&pyKey.PublicKey, reply.Sig)
	must(t, err)
	if !bytes.Equal(digest, AESDigest(aes)) {
		t.Errorf("aes digest %q, want %q", digest, AESDigest(aes))
	}
	if string(aes) != vecCrypticle {
		t.Errorf("aes key %q", aes)
	}
	token, err := Decrypt(goKey, reply.Token, OAEPSHA1)
	must(t, err)
	if string(token) != string(readVectors(t, "go_vectors.json").bytes(t, "auth_token_plain")) {
		t.Errorf("token %q", token)
	}
	session, err := Decrypt(goKey, reply.Session, OAEPSHA1)
	must(t, err)
	if _, err := NewCrypticle(string(session)); err != nil {
		t.Errorf("session key: %v", err)
	}
	if CleanKey(reply.PubKey) != CleanKey(string(EncodePublicKey(&pyKey.PublicKey))) {
		t.Errorf("pub_key is not the master key")
	}

	pub, err := protocol.DecodePublish(v.bytes(t, "frame_publish"))
	must(t, err)
	if err := Verify(&pyKey.PublicKey, pub.Load, pub.Sig, pub.SigAlgo); err != nil {
		t.Fatalf("publish signature: %v", err)
	}
	load, err := c.Loads(pub.Load, "")
	must(t, err)
	job, err := protocol.ParseJob(load.(*ordered.Map))
	must(t, err)
	want := &protocol.Job{Fun: "test.arg", Arg: []any{"a", 1}, Tgt: "*", JID: "20261201013000123456",
		TgtType: "glob", User: "root", Kwargs: ordered.New()}
	if d := cmp.Diff(want, job, cmpOpts); d != "" {
		t.Errorf("publish load (-want +got):\n%s", d)
	}
	pv, err := protocol.Unmarshal(v.bytes(t, "frame_private_reply"))
	must(t, err)
	pillar, err := OpenPrivate(goKey, &pyKey.PublicKey, pv.(*ordered.Map), "pillar", vecNonce, OAEPSHA1, PKCS1v15SHA1)
	must(t, err)
	if d := cmp.Diff(ordered.FromPairs("role", "db", "ports", []any{5432}), pillar, cmpOpts); d != "" {
		t.Errorf("private reply (-want +got):\n%s", d)
	}
	// The serial was consumed: a replay is ignored as Salt ignores it.
	again, err := c.Loads(pub.Load, "")
	must(t, err)
	if m := again.(*ordered.Map); m.Len() != 0 {
		t.Errorf("replayed publication decoded to %v", m.Keys())
	}
}

var cmpOpts = cmp.Options{
	cmp.Transformer("pairs", func(m *ordered.Map) [][2]any {
		var out [][2]any
		m.Range(func(k, v any) bool { out = append(out, [2]any{k, v}); return true })
		return out
	}),
}
