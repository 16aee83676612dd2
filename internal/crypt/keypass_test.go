package crypt

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestGenKeysPass: a key written with a passphrase is encrypted as
// Salt's gen_keys writes it (legacy PEM, AES-256-CBC) and reads back
// only with that passphrase; Python's cryptography, which Salt reads
// keys with (load_pem_private_key), reads it too.
func TestGenKeysPass(t *testing.T) {
	dir := t.TempDir()
	const pass = "s3cret pass"
	priv, err := GenKeysPass(dir, "master_sign", 2048, pass)
	must(t, err)
	b, err := os.ReadFile(priv)
	must(t, err)
	if !bytes.Contains(b, []byte("Proc-Type: 4,ENCRYPTED")) || !bytes.Contains(b, []byte("DEK-Info: AES-256-CBC,")) {
		t.Fatalf("not encrypted as Salt writes it:\n%s", b[:120])
	}
	k, err := LoadPrivateKey(priv, pass)
	must(t, err)
	pub, err := LoadPublicKey(filepath.Join(dir, "master_sign.pub"))
	must(t, err)
	if !k.PublicKey.Equal(pub) {
		t.Error("public key does not match the private key")
	}
	for _, wrong := range []string{"", "other"} {
		if _, err := LoadPrivateKey(priv, wrong); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("passphrase %q: %v", wrong, err)
		}
	}

	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import cryptography").Run() != nil {
		testhosts.Skip(t, "python3 with cryptography (Salt's key reader) not installed")
	}
	// The passphrase goes on stdin, never in argv.
	cmd := exec.Command(py, "-c", `import sys
from cryptography.hazmat.primitives import serialization
k = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), password=sys.stdin.buffer.read())
print(k.key_size)`, priv)
	cmd.Stdin = strings.NewReader(pass)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "2048" {
		t.Errorf("cryptography cannot read the key: %v\n%s", err, out)
	}
	// And the other way: a key as salt.crypt.gen_keys writes it with a
	// passphrase.
	pyKey := filepath.Join(dir, "salt.pem")
	cmd = exec.Command(py, "-c", `import sys
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
open(sys.argv[1], "wb").write(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
    serialization.BestAvailableEncryption(sys.stdin.buffer.read())))`, pyKey)
	cmd.Stdin = strings.NewReader(pass)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write a key with cryptography: %v\n%s", err, out)
	}
	if _, err := LoadPrivateKey(pyKey, pass); err != nil {
		t.Errorf("Salt's encrypted key: %v", err)
	}
}
