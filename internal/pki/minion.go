package pki

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/crypt"
)

// Minion is a minion's pki_dir: minion.pem, minion.pub and the cached
// master key minion_master.pub.
type Minion struct {
	Dir string
	// MasterPubName is minion_master.pub, or syndic_master.pub for a
	// syndic.
	MasterPubName string
}

// NewMinion returns the minion pki_dir at dir.
func NewMinion(dir string) *Minion { return &Minion{Dir: dir, MasterPubName: "minion_master.pub"} }

// Key loads minion.pem, generating the pair first when it is missing
// (AsyncAuth.get_keys).
func (m *Minion) Key(keySize int) (*rsa.PrivateKey, error) {
	path := filepath.Join(m.Dir, "minion.pem")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(m.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("minion key: %w", err)
		}
		if _, err := crypt.GenKeys(m.Dir, "minion", keySize); err != nil {
			return nil, fmt.Errorf("minion key: %w", err)
		}
	}
	return crypt.LoadPrivateKey(path, "")
}

// PubString returns minion.pub cleaned, as sent in the _auth "pub".
func (m *Minion) PubString() (string, error) {
	data, err := os.ReadFile(filepath.Join(m.Dir, "minion.pub"))
	if err != nil {
		return "", fmt.Errorf("minion pub: %w", err)
	}
	return crypt.CleanKey(string(data)), nil
}

// MasterPub returns the cached master key (cleaned); ok is false when
// none is cached yet.
func (m *Minion) MasterPub() (pub string, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(m.Dir, m.MasterPubName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("master pub: %w", err)
	}
	return crypt.CleanKey(string(data)), true, nil
}

// SaveMasterPub caches the master key the first time the minion meets
// it (AsyncAuth.verify_master writes payload["pub_key"] as given).
func (m *Minion) SaveMasterPub(pub string) error {
	if err := crypt.WriteFileAtomic(filepath.Join(m.Dir, m.MasterPubName), []byte(pub), 0o644); err != nil {
		return fmt.Errorf("save master pub: %w", err)
	}
	return nil
}
