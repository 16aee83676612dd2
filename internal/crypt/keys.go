package crypt

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// DefaultKeySize is Salt's keysize default.
const DefaultKeySize = 2048

// Key file permissions Salt leaves: the private key is written under
// umask 0o277 and chmod 0o400; the public key under the process umask,
// normally 0o644 (salt/crypt.py gen_keys).
const (
	PrivateKeyPerm fs.FileMode = 0o400
	PublicKeyPerm  fs.FileMode = 0o644
)

// GenerateKey makes an RSA key with exponent 65537.
func GenerateKey(bits int) (*rsa.PrivateKey, error) {
	if bits <= 0 {
		bits = DefaultKeySize
	}
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, fmt.Errorf("generate rsa key: %w", err)
	}
	return k, nil
}

// EncodePrivateKey returns the key as Salt writes master.pem and
// minion.pem: unencrypted PKCS#1, "-----BEGIN RSA PRIVATE KEY-----"
// (cryptography's PrivateFormat.TraditionalOpenSSL).
func EncodePrivateKey(k *rsa.PrivateKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

// EncodePublicKey returns the key as Salt writes .pub files and sends
// pub/pub_key: SubjectPublicKeyInfo, "-----BEGIN PUBLIC KEY-----".
func EncodePublicKey(k *rsa.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		// MarshalPKIXPublicKey fails only for unknown key types.
		panic(fmt.Sprintf("crypt: marshal rsa public key: %v", err))
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// ParsePrivateKey reads a PEM private key as cryptography's
// load_pem_private_key does for RSA: PKCS#1, PKCS#8, or legacy
// passphrase-encrypted PKCS#1 (Salt's key_pass).
func ParsePrivateKey(data []byte, passphrase string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("parse private key: no PEM block: %w", ErrInvalidKey)
	}
	der := block.Bytes
	//lint:ignore SA1019 Salt writes legacy-encrypted PEM when key_pass is set.
	if x509.IsEncryptedPEMBlock(block) { //nolint:staticcheck
		if passphrase == "" {
			return nil, fmt.Errorf("parse private key: encrypted and no passphrase: %w", ErrInvalidKey)
		}
		var err error
		//lint:ignore SA1019 see above.
		if der, err = x509.DecryptPEMBlock(block, []byte(passphrase)); err != nil { //nolint:staticcheck
			return nil, fmt.Errorf("parse private key: %w: %w", ErrInvalidKey, err)
		}
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(der)
		if err != nil {
			return nil, fmt.Errorf("parse private key: %w: %w", ErrInvalidKey, err)
		}
		return k, nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			return nil, fmt.Errorf("parse private key: %w: %w", ErrInvalidKey, err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("parse private key: %T is not RSA: %w", k, ErrInvalidKey)
		}
		return rk, nil
	}
	return nil, fmt.Errorf("parse private key: PEM type %q: %w", block.Type, ErrInvalidKey)
}

// ParsePublicKey reads a PEM RSA public key, SubjectPublicKeyInfo or
// PKCS#1 ("RSA PUBLIC KEY"), as load_pem_public_key does.
func ParsePublicKey(data []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("parse public key: no PEM block: %w", ErrInvalidKey)
	}
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse public key: %w: %w", ErrInvalidKey, err)
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("parse public key: %T is not RSA: %w", k, ErrInvalidKey)
		}
		return rk, nil
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse public key: %w: %w", ErrInvalidKey, err)
		}
		return k, nil
	}
	return nil, fmt.Errorf("parse public key: PEM type %q: %w", block.Type, ErrInvalidKey)
}

// LoadPrivateKey reads a private key file.
func LoadPrivateKey(path, passphrase string) (*rsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load private key: %w", err)
	}
	k, err := ParsePrivateKey(data, passphrase)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return k, nil
}

// LoadPublicKey reads a public key file.
func LoadPublicKey(path string) (*rsa.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load public key: %w", err)
	}
	k, err := ParsePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return k, nil
}

// GenKeys writes <dir>/<name>.pem and <dir>/<name>.pub as salt.crypt
// gen_keys does and returns the private key path. If the private key
// already exists it is kept ("use the winner's key"). Files are written
// atomically with Salt's permissions.
func GenKeys(dir, name string, bits int) (string, error) {
	return GenKeysPass(dir, name, bits, "")
}

// GenKeysPass is GenKeys with a passphrase: a non-empty one encrypts
// the private key as gen_keys does with one (TraditionalOpenSSL PEM
// under BestAvailableEncryption: AES-256-CBC, "Proc-Type: 4,ENCRYPTED"),
// which ParsePrivateKey reads back with the same passphrase.
func GenKeysPass(dir, name string, bits int, passphrase string) (string, error) {
	priv := filepath.Join(dir, name+".pem")
	pub := filepath.Join(dir, name+".pub")
	k, err := GenerateKey(bits)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(priv); err == nil {
		return priv, nil
	}
	privPEM := EncodePrivateKey(k)
	if passphrase != "" {
		//lint:ignore SA1019 Salt writes legacy-encrypted PEM when a passphrase is set.
		block, err := x509.EncryptPEMBlock(rand.Reader, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k), []byte(passphrase), x509.PEMCipherAES256) //nolint:staticcheck
		if err != nil {
			return "", fmt.Errorf("gen keys: encrypt %s: %w", priv, err)
		}
		privPEM = pem.EncodeToMemory(block)
	}
	if err := WriteFileAtomic(priv, privPEM, PrivateKeyPerm); err != nil {
		return "", fmt.Errorf("gen keys: %w", err)
	}
	if err := WriteFileAtomic(pub, EncodePublicKey(&k.PublicKey), PublicKeyPerm); err != nil {
		return "", fmt.Errorf("gen keys: %w", err)
	}
	return priv, nil
}

// WriteFileAtomic writes data to a temporary file in path's directory
// with perm, syncs it and renames it over path, so readers never see a
// partial key.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return writeFileAtomic(path, data, perm, true)
}

// WriteFileReplace is WriteFileAtomic without the sync, for caches whose
// readers verify what they read (by hash) and fetch again: a crash may
// lose the file, never expose half of it.
func WriteFileReplace(path string, data []byte, perm fs.FileMode) error {
	return writeFileAtomic(path, data, perm, false)
}

func writeFileAtomic(path string, data []byte, perm fs.FileMode, sync bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if werr == nil && sync {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, perm)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// CleanKey normalises a PEM string as salt.crypt.clean_key does:
// surrounding whitespace stripped and lines joined with "\n" (no final
// newline). Keys are compared and sent in this form.
func CleanKey(key string) string {
	return strings.Join(splitLines(strings.TrimSpace(key)), "\n")
}

// splitLines is Python's str.splitlines for the line boundaries that can
// occur in PEM text.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexAny(s, "\r\n\v\f\x1c\x1d\x1e\u0085\u2028\u2029")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		n := 1
		switch {
		case strings.HasPrefix(s[i:], "\r\n"):
			n = 2
		case s[i] >= 0x80:
			_, n = utf8.DecodeRuneInString(s[i:])
		}
		s = s[i+n:]
	}
	return out
}
