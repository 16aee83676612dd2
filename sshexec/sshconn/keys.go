package sshconn

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"
)

// KeyBits is the size of the generated salt-ssh key: ssh-keygen's RSA
// default, which is what Salt gets from `ssh-keygen -t rsa`.
const KeyBits = 3072

// DefaultKeyPath returns Salt's default salt-ssh key, <pki_dir>/ssh/salt-ssh.rsa
// (salt/client/ssh/__init__.py, SSH.__init__).
func DefaultKeyPath(pkiDir string) string {
	return filepath.Join(pkiDir, "ssh", "salt-ssh.rsa")
}

// EnsureKey returns the path of the salt-ssh private key under pkiDir,
// generating it on first use as Salt's shell.gen_key does: an unencrypted
// RSA key (mode 0600) and its ".pub" in authorized_keys format (0644), in a
// 0700 directory. Both files are written atomically, the public one first,
// so whoever sees the private key also sees its public half. Two processes
// racing serialise on a lock file; the loser reuses the winner's key. A key
// whose ".pub" is missing gets it rebuilt.
func EnsureKey(pkiDir string) (string, error) {
	priv := DefaultKeyPath(pkiDir)
	if ok, err := keyPairExists(priv); ok || err != nil {
		return priv, err
	}
	dir := filepath.Dir(priv)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create key dir: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".salt-ssh.rsa.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", fmt.Errorf("lock key dir: %w", err)
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return "", fmt.Errorf("lock key dir: %w", err)
	}
	defer unlockFile(lock)

	if ok, err := keyPairExists(priv); ok || err != nil {
		return priv, err
	}
	if _, err := os.Stat(priv); err == nil {
		return priv, rebuildPub(priv)
	}
	return priv, generateKey(priv)
}

// keyPairExists reports whether both halves are present.
func keyPairExists(priv string) (bool, error) {
	for _, p := range []string{priv, priv + ".pub"} {
		_, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("check key: %w", err)
		}
	}
	return true, nil
}

func generateKey(priv string) error {
	key, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return fmt.Errorf("generate key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(key, "salt-ssh")
	if err != nil {
		return fmt.Errorf("encode key: %w", err)
	}
	pub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("encode key: %w", err)
	}
	if err := writeAtomic(priv+".pub", authorizedLine(pub), 0o644); err != nil {
		return err
	}
	return writeAtomic(priv, pem.EncodeToMemory(block), 0o600)
}

// rebuildPub writes the public half of an existing unencrypted key.
func rebuildPub(priv string) error {
	signers, err := LoadSigners([]string{priv}, nil)
	if err != nil {
		return err
	}
	return writeAtomic(priv+".pub", authorizedLine(signers[0].PublicKey()), 0o644)
}

// authorizedLine is the key in authorized_keys format with Salt's comment
// convention (SSH.get_pubkey appends "rsa root@master"; ssh-keygen writes
// user@host; any comment works).
func authorizedLine(pub ssh.PublicKey) []byte {
	line := ssh.MarshalAuthorizedKey(pub) // ends in "\n"
	return append(line[:len(line)-1], " salt-ssh\n"...)
}

// writeAtomic writes data to a temp file in path's directory with perm,
// syncs it and renames it onto path.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// LoadSigners reads private keys in OpenSSH or PEM (PKCS#1, PKCS#8, SEC1)
// format. passphrase decrypts encrypted keys; an encrypted key without a
// passphrase, or with a wrong one, yields a *PassphraseError.
func LoadSigners(paths []string, passphrase []byte) ([]ssh.Signer, error) {
	signers := make([]ssh.Signer, 0, len(paths))
	for _, p := range paths {
		s, err := loadSigner(p, passphrase)
		if err != nil {
			return nil, err
		}
		signers = append(signers, s)
	}
	return signers, nil
}

func loadSigner(path string, passphrase []byte) (ssh.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &KeyError{Path: path, Err: err}
	}
	s, err := ssh.ParsePrivateKey(data)
	var missing *ssh.PassphraseMissingError
	if !errors.As(err, &missing) {
		if err != nil {
			return nil, &KeyError{Path: path, Err: err}
		}
		return s, nil
	}
	if len(passphrase) == 0 {
		return nil, &PassphraseError{Path: path}
	}
	s, err = ssh.ParsePrivateKeyWithPassphrase(data, passphrase)
	if errors.Is(err, x509.IncorrectPasswordError) {
		return nil, &PassphraseError{Path: path, Incorrect: true}
	}
	if err != nil {
		return nil, &KeyError{Path: path, Err: err}
	}
	return s, nil
}
