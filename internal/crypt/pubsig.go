package crypt

import (
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Salt's names for the master public-key signature files.
const (
	MasterSignKeyName     = "master_sign"
	MasterPubkeySignature = "master_pubkey_signature"
)

// PubSig signs a master public key with the master_sign key for the
// _auth reply's "pub_sig": base64 of the PKCS#1 v1.5 signature, with the
// trailing newline of binascii.b2a_base64.
func PubSig(signKey *rsa.PrivateKey, masterPub, sigAlgo string) (string, error) {
	sig, err := Sign(signKey, []byte(masterPub), sigAlgo)
	if err != nil {
		return "", fmt.Errorf("sign master pub: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig) + "\n", nil
}

// VerifyPubSig is AsyncAuth.verify_pubkey_sig: pubSig (base64) must be
// the master_sign key's signature of the offered master key.
func VerifyPubSig(signPub *rsa.PublicKey, masterPub, pubSig, sigAlgo string) error {
	sig, err := base64.StdEncoding.DecodeString(trimNL(pubSig))
	if err != nil {
		return fmt.Errorf("verify master pub signature: %w", ErrVerify)
	}
	return Verify(signPub, []byte(masterPub), sig, sigAlgo)
}

func trimNL(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

// GenSignature is salt.crypt.gen_signature (salt-key --gen-signature):
// the text of pubPath is signed with privPath (PKCS1v15-SHA1) and written
// base64-encoded to sigPath. An existing sigPath is kept and false
// returned.
func GenSignature(privPath, pubPath, sigPath, passphrase string) (bool, error) {
	pub, err := os.ReadFile(pubPath)
	if err != nil {
		return false, fmt.Errorf("gen signature: %w", err)
	}
	priv, err := LoadPrivateKey(privPath, passphrase)
	if err != nil {
		return false, fmt.Errorf("gen signature: %w", err)
	}
	sig, err := PubSig(priv, string(pub), PKCS1v15SHA1)
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(sigPath); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("gen signature: %w", err)
	}
	if err := WriteFileAtomic(sigPath, []byte(sig), 0o644); err != nil {
		return false, fmt.Errorf("gen signature: %w", err)
	}
	return true, nil
}
