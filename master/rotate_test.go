package master

import (
	"bytes"
	"crypto/rsa"
	"log/slog"
	"math/big"
	"strings"
	"testing"
)

// TestFailedRotationIsLoggedAndKeepsTheKey checks that a rotation of the
// AES key that fails in the maintenance loop is logged with its reason
// and leaves the previous key and signature in use.
func TestFailedRotationIsLoggedAndKeepsTheKey(t *testing.T) {
	var logs bytes.Buffer
	m, err := New(tempOptions(t), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	key, sig := m.aes.keyAndSig()
	// A 12-bit key cannot carry the signature: crypt.AESSignature fails.
	m.key = &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: big.NewInt(3233), E: 17}}
	m.rotateOrWarn("publish_session")
	if k, s := m.aes.keyAndSig(); k != key || !bytes.Equal(s, sig) {
		t.Error("a failed rotation replaced the AES key or its signature")
	}
	out := logs.String()
	if !strings.Contains(out, "AES key not rotated") || !strings.Contains(out, "reason=publish_session") || !strings.Contains(out, "rotate aes key:") {
		t.Errorf("log lacks the failed rotation:\n%s", out)
	}
}
