package master

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/crypt"
)

// pubSignature is the "pub_sig" the master adds to every accepted auth
// reply with master_sign_pubkey (salt/channel/server.py _auth;
// salt/crypt.py MasterKeys; doc/topics/tutorials/multimaster_pki.rst):
// with master_use_pubkey_signature the precomputed signature in
// pki_dir/<master_pubkey_signature> (salt-key --gen-signature), else the
// signature of the key the master sends by pki_dir/<master_sign_key_name>
// .pem, which is created when missing as Salt's __get_keys does. The key
// does not change while the master runs, so the signature is made once.
// "" when signing is off.
func pubSignature(o Options, pub string) (string, error) {
	if on, _ := o.Raw.Value("master_sign_pubkey").(bool); !on {
		return "", nil
	}
	if use, _ := o.Raw.Value("master_use_pubkey_signature").(bool); use {
		name, _ := o.Raw.Value("master_pubkey_signature").(string)
		if name == "" {
			name = crypt.MasterPubkeySignature
		}
		path := filepath.Join(o.PKIDir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("master_use_pubkey_signature: no signature file at %s; create it with 'salt-key --gen-signature': %w", path, err)
		}
		return crypt.CleanKey(string(b)), nil
	}
	name, _ := o.Raw.Value("master_sign_key_name").(string)
	if name == "" {
		name = crypt.MasterSignKeyName
	}
	pass, err := crypt.KeyPass("signing_key_pass", o.Raw.Value("signing_key_pass"))
	if err != nil {
		return "", fmt.Errorf("master_sign_pubkey: %w", err)
	}
	priv := filepath.Join(o.PKIDir, name+".pem")
	if _, err := os.Stat(priv); errors.Is(err, fs.ErrNotExist) {
		// Salt's master makes the key unencrypted and then cannot sign
		// with it when signing_key_pass is set; Brine encrypts it with
		// the passphrase, as salt-key --gen-signature --auto-create does.
		if _, err := crypt.GenKeysPass(o.PKIDir, name, o.KeySize, pass); err != nil {
			return "", fmt.Errorf("master_sign_pubkey: create %s: %w", priv, err)
		}
	}
	k, err := crypt.LoadPrivateKey(priv, pass)
	if err != nil {
		return "", fmt.Errorf("master_sign_pubkey: unable to read key %s; passphrase may be incorrect (signing_key_pass): %w", priv, err)
	}
	return crypt.PubSig(k, crypt.CleanKey(pub), crypt.PKCS1v15SHA1)
}
