package pki

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
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
		if err := restrictDir(m.Dir); err != nil {
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

// ErrMasterKeyChanged is a master whose public key is not the one the
// minion cached ("The master key has changed, the salt master could have
// been subverted").
var ErrMasterKeyChanged = errors.New("master public key has changed")

// AuthRequest builds the minion's sign-in load
// (AsyncAuth.minion_sign_in_payload): the token is encrypted for the
// master only when its key is already cached, and the public key is
// sent cleaned.
func (m *Minion) AuthRequest(id, nonce string, token []byte, encAlgo, sigAlgo string, grains *ordered.Map) (*protocol.AuthRequest, error) {
	pub, err := m.PubString()
	if err != nil {
		return nil, err
	}
	req := &protocol.AuthRequest{ID: id, Nonce: nonce, EncAlgo: encAlgo, SigAlgo: sigAlgo, AutosignGrains: grains, Pub: pub}
	master, ok, err := m.MasterPub()
	if err != nil || !ok {
		return req, err
	}
	mk, err := crypt.ParsePublicKey([]byte(master))
	if err != nil {
		return req, nil // Salt logs the failure and signs in without a token.
	}
	if req.Token, err = crypt.Encrypt(mk, token, encAlgo); err != nil {
		return nil, fmt.Errorf("auth request: %w", err)
	}
	return req, nil
}

// CheckMasterKey is AsyncAuth.verify_master without master public key
// signing: when the minion sent a token (it had the key cached) and
// open_mode is off, the offered key must equal the cached one; when
// nothing is cached yet the offered key is saved. It reports whether the
// key was saved now.
func (m *Minion) CheckMasterKey(offered string, sentToken, openMode bool) (saved bool, err error) {
	cached, ok, err := m.MasterPub()
	if err != nil {
		return false, err
	}
	if ok && sentToken && !openMode {
		if crypt.CleanKey(offered) != cached {
			return false, ErrMasterKeyChanged
		}
		return false, nil
	}
	if !ok {
		return true, m.SaveMasterPub(offered)
	}
	return false, nil
}
