package wrapper

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/sshexec"
)

// keyPlan is the minion key pair a bootstrap settles on.
type keyPlan struct {
	pub, pem     string // pem is set only for a pair made here
	masterPub    string
	acceptedPath string
	created      bool // minions/<id> written by this run
	how          string
}

func (k keyPlan) step() step {
	s := step{ID: "accepted key", Name: k.acceptedPath, result: true, comment: k.how}
	if k.created {
		s.changes = ordered.FromPairs(k.acceptedPath, k.how)
	}
	return s
}

// settleKey decides the minion's key pair and pre-accepts its public key
// on the master:
//
//   - the host has a pair and the master accepted that key: kept;
//   - the host has a pair the master has not accepted: its key is
//     accepted (read over the authenticated SSH session, so it is the
//     host's own);
//   - otherwise a new pair is made here, its private half sent with the
//     install job; a different key the master already accepted for the
//     id is replaced only with force=True, since it may be another
//     machine's.
//
// A key the master rejected is left to the administrator (salt-key -d).
func (b *Bootstrap) settleKey(ctx context.Context, h *sshexec.Host, o *MasterLink, id string, force bool) (keyPlan, error) {
	pm := pki.NewMaster(o.PKIDir)
	k := keyPlan{acceptedPath: pm.Path(pki.Accepted, id)}
	if !pki.ValidID(o.PKIDir, id) {
		return k, fmt.Errorf("minion id %q is not a valid key file name", id)
	}
	mp, err := os.ReadFile(filepath.Join(o.PKIDir, "master.pub"))
	if err != nil {
		return k, fmt.Errorf("read the master's public key (has salt-master started with pki_dir %s?): %w", o.PKIDir, err)
	}
	k.masterPub = string(mp)
	if rej, err := readKey(pm.Path(pki.Rejected, id)); err != nil {
		return k, err
	} else if rej != "" {
		return k, fmt.Errorf("the master rejected a key for %s; delete it first (salt-key -d %s)", id, id)
	}
	accepted, err := readKey(k.acceptedPath)
	if err != nil {
		return k, err
	}
	ret, rc, err := h.Call(ctx, "minion_bootstrap.key", nil, nil)
	hostPub, ok := ret.(string)
	if err == nil && (rc != 0 || !ok) {
		err = fmt.Errorf("%v", ret)
	}
	if err != nil {
		return k, fmt.Errorf("read the minion key of %s: %w", h.Target.ID, err)
	}
	switch clean := crypt.CleanKey(hostPub); {
	case hostPub != "" && clean == accepted:
		k.pub, k.how = hostPub, "the master has accepted the host's key"
		return k, nil
	case hostPub != "" && accepted == "":
		k.pub, k.how = hostPub, "the host's existing key accepted"
	case accepted != "" && !force:
		return k, fmt.Errorf("the master holds another accepted key for %s (%s); pass force=True to replace it", id, k.acceptedPath)
	default:
		priv, err := crypt.GenerateKey(o.KeySize)
		if err != nil {
			return k, fmt.Errorf("generate a key pair for %s: %w", id, err)
		}
		k.pub, k.pem = string(crypt.EncodePublicKey(&priv.PublicKey)), string(crypt.EncodePrivateKey(priv))
		k.how = "new key pair made and accepted"
	}
	return k, k.accept(pm, id)
}

// accept writes the key to minions/<id> as `salt-key -a` would leave it,
// dropping a pending or denied copy of the same id.
func (k *keyPlan) accept(pm *pki.Master, id string) error {
	if err := os.MkdirAll(filepath.Dir(k.acceptedPath), 0o700); err != nil {
		return fmt.Errorf("accept the key of %s: %w", id, err)
	}
	if err := crypt.WriteFileAtomic(k.acceptedPath, []byte(k.pub), crypt.PublicKeyPerm); err != nil {
		return fmt.Errorf("accept the key of %s: %w", id, err)
	}
	k.created = true
	for _, state := range []string{pki.Pending, pki.Denied} {
		os.Remove(pm.Path(state, id))
	}
	return nil
}
