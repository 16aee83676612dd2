package minion

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// ErrMasterSignature is a master public key whose signature (pub_sig)
// is missing, unexpected or does not verify with the minion's copy of
// master_sign.pub (salt/crypt.py check_auth_deps, verify_signing_master).
var ErrMasterSignature = errors.New("master public key signature")

// checkAuthDeps is AsyncAuth.check_auth_deps: the master signs its key
// exactly when the minion verifies it.
func (m *Minion) checkAuthDeps(pubSig string) error {
	switch {
	case pubSig != "" && !m.c.VerifyMasterPubkeySign:
		return fmt.Errorf("the master sent its public-key signature, but signature verification is not enabled on the minion (verify_master_pubkey_sign): %w", ErrMasterSignature)
	case pubSig == "" && m.c.VerifyMasterPubkeySign:
		return fmt.Errorf("the master did not send its public-key signature, but verify_master_pubkey_sign is on: %w", ErrMasterSignature)
	}
	return nil
}

// verifySigningMaster is AsyncAuth.verify_signing_master: pubSig must
// be the signature of the offered key by pki_dir/<master_sign_key_name>
// .pub; the key is then pinned in minion_master.pub, replacing another
// master's, which is how one minion follows masters with different keys.
func (m *Minion) verifySigningMaster(offered, pubSig string) error {
	name := m.c.MasterSignKeyName
	if name == "" {
		name = crypt.MasterSignKeyName
	}
	path := filepath.Join(m.c.PKIDir, name+".pub")
	signPub, err := crypt.LoadPublicKey(path)
	if err != nil {
		return fmt.Errorf("verification public key %s: copy it from the master to the minion's pki directory: %w (%w)", path, ErrMasterSignature, err)
	}
	// The master sends its key cleaned (clean_key strips the final
	// newline) while salt-key --gen-signature signs master.pub as read,
	// newline included (salt/crypt.py gen_signature), so Salt 3006's
	// master_use_pubkey_signature fails its own minions' check; Brine
	// accepts the signature of either text of the same key.
	err = crypt.VerifyPubSig(signPub, offered, pubSig, crypt.PKCS1v15SHA1)
	if err != nil && crypt.VerifyPubSig(signPub, crypt.CleanKey(offered)+"\n", pubSig, crypt.PKCS1v15SHA1) == nil {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("received signed public-key from master %s but signature verification failed: %w (%w)", m.req.Address(), ErrMasterSignature, err)
	}
	m.log.Info("Received signed and verified master pubkey from master", "master", m.req.Address())
	return m.pinMaster(offered)
}

// verifyWithOffered checks a signed reply with the key it offers, for
// a minion that verifies master keys by their signature.
func verifyWithOffered(sc *protocol.SignedClear, load *ordered.Map, offered, sigAlgo string) (*ordered.Map, error) {
	mk, err := crypt.ParsePublicKey([]byte(offered))
	if err != nil {
		return nil, fmt.Errorf("offered master key: %w", err)
	}
	if err := crypt.Verify(mk, sc.Load, sc.Sig, sigAlgo); err != nil {
		return nil, fmt.Errorf("reply signature: %w", err)
	}
	return load, nil
}
