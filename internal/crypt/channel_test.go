package crypt

import (
	"crypto/rsa"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

func TestAuthReplyRoundTrip(t *testing.T) {
	minion, master := testKeys(t)
	token := []byte(GenerateKeyString())
	keys := AuthKeys{AES: GenerateKeyString(), Session: GenerateKeyString()}
	pub := string(EncodePublicKey(&master.PublicKey))
	tests := []struct {
		name    string
		req     *protocol.AuthRequest
		tamper  func(r *protocol.AuthReply)
		token   []byte
		sig     []byte // AuthKeys.AESSig
		wantErr error
	}{
		{name: "with token", req: &protocol.AuthRequest{EncAlgo: OAEPSHA1, Token: mustEncrypt(t, &master.PublicKey, token)}, token: token},
		{name: "first contact", req: &protocol.AuthRequest{EncAlgo: OAEPSHA1}},
		{name: "signature computed once", req: &protocol.AuthRequest{EncAlgo: OAEPSHA1}, sig: mustSig(t, master, keys.AES)},
		{name: "signature of another key", req: &protocol.AuthRequest{EncAlgo: OAEPSHA1}, sig: mustSig(t, master, "other"), wantErr: ErrAuthentication},
		{name: "token expected but missing", req: &protocol.AuthRequest{EncAlgo: OAEPSHA1}, token: token, wantErr: ErrAuthentication},
		{name: "forged sig", req: &protocol.AuthRequest{EncAlgo: OAEPSHA1}, wantErr: ErrAuthentication,
			tamper: func(r *protocol.AuthReply) { r.Sig, _ = PrivateEncrypt(minion, AESDigest([]byte(keys.AES))) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := keys
			k.AESSig = tc.sig
			r, err := BuildAuthReply(master, &minion.PublicKey, tc.req, k, pub, 4505)
			must(t, err)
			if tc.tamper != nil {
				tc.tamper(r)
			}
			got, err := OpenAuthReply(minion, &master.PublicKey, r, tc.token, OAEPSHA1)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && (got.AES != keys.AES || got.Session != keys.Session) {
				t.Errorf("keys = %+v", got)
			}
		})
	}
	_, err := BuildAuthReply(master, &minion.PublicKey, &protocol.AuthRequest{EncAlgo: "OAEP-MD5"}, keys, pub, 4505)
	if !errors.Is(err, ErrUnsupportedAlgorithm) {
		t.Errorf("bad enc algo: %v", err)
	}
}

func TestPublishRoundTrip(t *testing.T) {
	minion, master := testKeys(t)
	aes, err := NewCrypticle(GenerateKeyString())
	must(t, err)
	job := (&protocol.Job{Fun: "test.ping", Tgt: "*", JID: "20261201000000000001", TgtType: "glob", User: "root"}).SaltMap()
	p, err := WrapPublish(aes, master, job, 1, PKCS1v15SHA1)
	must(t, err)
	frame, err := protocol.Marshal(p)
	must(t, err)
	back, err := protocol.DecodePublish(frame)
	must(t, err)
	recv, err := NewCrypticle(aes.KeyString())
	must(t, err)
	got, err := OpenPublish(recv, &master.PublicKey, back, true)
	must(t, err)
	if d := cmp.Diff(job, got, cmpOpts); d != "" {
		t.Errorf("publish load (-want +got):\n%s", d)
	}
	if _, err := OpenPublish(recv, &minion.PublicKey, back, true); !errors.Is(err, ErrAuthentication) {
		t.Errorf("wrong master key: %v", err)
	}
	back.Sig = nil
	if _, err := OpenPublish(recv, &master.PublicKey, back, true); !errors.Is(err, ErrAuthentication) {
		t.Errorf("unsigned: %v", err)
	}
}

func TestPrivateRoundTrip(t *testing.T) {
	minion, master := testKeys(t)
	reply, err := SealPrivate(master, &minion.PublicKey, false, "pillar", vecNonce, OAEPSHA224, PKCS1v15SHA224)
	must(t, err)
	got, err := OpenPrivate(minion, &master.PublicKey, reply, "pillar", vecNonce, OAEPSHA224, PKCS1v15SHA224)
	must(t, err)
	if m, ok := got.(*ordered.Map); !ok || m.Len() != 0 {
		t.Errorf("false pillar = %#v, want empty map", got)
	}
	if _, err := OpenPrivate(minion, &master.PublicKey, reply, "pillar", "ffffffffffffffffffffffffffffffff", OAEPSHA224, PKCS1v15SHA224); !errors.Is(err, ErrNonce) {
		t.Errorf("wrong nonce: %v", err)
	}
	if _, err := OpenPrivate(minion, &minion.PublicKey, reply, "pillar", vecNonce, OAEPSHA224, PKCS1v15SHA224); !errors.Is(err, ErrAuthentication) {
		t.Errorf("wrong master: %v", err)
	}
	tok, err := RequestToken(minion)
	must(t, err)
	if !CheckRequestToken(&minion.PublicKey, tok) || CheckRequestToken(&master.PublicKey, tok) {
		t.Errorf("request token check")
	}
	sc, err := SignClear(master, protocol.AuthRefusal(true, vecNonce), PKCS1v15SHA1)
	must(t, err)
	v, err := OpenSignedClear(&master.PublicKey, sc, PKCS1v15SHA1)
	must(t, err)
	if d := cmp.Diff(ordered.FromPairs("ret", true, "nonce", vecNonce), v, cmpOpts); d != "" {
		t.Errorf("signed refusal (-want +got):\n%s", d)
	}
	sc.Load[len(sc.Load)-1] ^= 1
	if _, err := OpenSignedClear(&master.PublicKey, sc, PKCS1v15SHA1); !errors.Is(err, ErrVerify) {
		t.Errorf("tampered clear reply: %v", err)
	}
}

func mustSig(t *testing.T, master *rsa.PrivateKey, aes string) []byte {
	t.Helper()
	sig, err := AESSignature(master, aes)
	must(t, err)
	return sig
}
