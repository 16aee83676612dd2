package crypt

import (
	"crypto/rsa"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

func TestRequestRoundTrip(t *testing.T) {
	minion, other := testKeys(t)
	session, err := NewCrypticle(GenerateKeyString())
	must(t, err)
	now := time.Unix(1796000000, 0)
	load := (&protocol.Return{ID: "m1", Success: true, Return: true, JID: "1", Fun: "test.ping"}).SaltMap()
	tests := []struct {
		name  string
		id    string
		envID string
		pub   *rsa.PublicKey
		ttl   time.Duration
		at    time.Time
		errIs error
	}{
		{name: "ok", id: "m1", envID: "m1", pub: &minion.PublicKey},
		{name: "ttl ok", id: "m1", envID: "m1", pub: &minion.PublicKey, ttl: time.Minute, at: now.Add(30 * time.Second)},
		{name: "expired", id: "m1", envID: "m1", pub: &minion.PublicKey, ttl: time.Minute, at: now.Add(2 * time.Minute), errIs: protocol.ErrBadLoad},
		{name: "id mismatch", id: "m1", envID: "m2", pub: &minion.PublicKey, errIs: protocol.ErrBadLoad},
		{name: "wrong key", id: "m1", envID: "m1", pub: &other.PublicKey, errIs: protocol.ErrBadLoad},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := PackageRequest(session, minion, tc.id, load, vecNonce, now, OAEPSHA1, PKCS1v15SHA1)
			must(t, err)
			req.ID = tc.envID
			frame, err := protocol.Marshal(req)
			must(t, err)
			back, err := protocol.DecodeRequest(frame)
			must(t, err)
			at := tc.at
			if at.IsZero() {
				at = now
			}
			got, nonce, err := OpenRequest(session, tc.pub, back, tc.ttl, at)
			if !errors.Is(err, tc.errIs) {
				t.Fatalf("err = %v, want %v", err, tc.errIs)
			}
			if err != nil {
				return
			}
			want := load.Copy()
			want.Set("ts", int(now.Unix()))
			if d := cmp.Diff(want, got, cmpOpts); d != "" || nonce != vecNonce {
				t.Errorf("nonce %q, load (-want +got):\n%s", nonce, d)
			}
		})
	}
	other2, err := NewCrypticle(GenerateKeyString())
	must(t, err)
	req, err := PackageRequest(session, minion, "m1", ordered.New(), vecNonce, now, OAEPSHA1, PKCS1v15SHA1)
	must(t, err)
	if _, _, err := OpenRequest(other2, &minion.PublicKey, req, 0, now); !errors.Is(err, ErrAuthentication) {
		t.Errorf("wrong session key: %v", err)
	}
}
