package crypt

import (
	"bytes"
	"crypto/rsa"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/protocol"
)

// AuthKeys are the master's secrets an accepted _auth hands out.
type AuthKeys struct {
	// AES is the master-wide publish key string.
	AES string
	// Session is this minion's request session key string.
	Session string
	// AESSig, when set, is AESSignature(master, AES), which the master
	// computes once per AES key rather than once per sign-in.
	AESSig []byte
}

// AESSignature is the auth reply's "sig": the master's X9.31 signature
// of sha256(aes).hexdigest(). It depends only on the master key and the
// AES key, so a master can compute it once per rotation.
func AESSignature(master *rsa.PrivateKey, aes string) ([]byte, error) {
	return PrivateEncrypt(master, AESDigest([]byte(aes)))
}

// BuildAuthReply is the accepted branch of ReqServerChannel._auth for
// auth_mode 1 (Salt's default): the minion's token, when sent, is
// decrypted with the master key and re-encrypted for the minion; the AES
// and session key strings are encrypted for the minion; "sig" is the
// X9.31 signature of sha256(aes).hexdigest(). A token that does not
// decrypt is left out, as Salt does for old minions.
func BuildAuthReply(master *rsa.PrivateKey, minion *rsa.PublicKey, req *protocol.AuthRequest, keys AuthKeys, masterPub string, publishPort int) (*protocol.AuthReply, error) {
	r := &protocol.AuthReply{PubKey: CleanKey(masterPub), PublishPort: publishPort, Nonce: req.Nonce}
	if req.Token != nil {
		if tok, err := Decrypt(master, req.Token, req.EncAlgo); err == nil {
			if r.Token, err = Encrypt(minion, tok, req.EncAlgo); err != nil {
				return nil, fmt.Errorf("build auth reply: %w", err)
			}
		} else if _, algoErr := encryptionHash(req.EncAlgo); algoErr != nil {
			return nil, fmt.Errorf("build auth reply: %w", algoErr)
		}
	}
	var err error
	if r.AES, err = Encrypt(minion, []byte(keys.AES), req.EncAlgo); err != nil {
		return nil, fmt.Errorf("build auth reply: %w", err)
	}
	if r.Session, err = Encrypt(minion, []byte(keys.Session), req.EncAlgo); err != nil {
		return nil, fmt.Errorf("build auth reply: %w", err)
	}
	r.Sig = keys.AESSig
	if r.Sig == nil {
		if r.Sig, err = AESSignature(master, keys.AES); err != nil {
			return nil, fmt.Errorf("build auth reply: %w", err)
		}
	}
	return r, nil
}

// OpenAuthReply is the minion's AsyncAuth.decrypt_aes/extract_aes: the
// AES key is decrypted, its digest must match the master's X9.31 "sig",
// and, when the minion sent a token, the token must come back (or be
// appended after "_|-" with auth_mode 2). It returns the AES and session
// key strings. A mismatch is ErrAuthentication.
func OpenAuthReply(minion *rsa.PrivateKey, master *rsa.PublicKey, r *protocol.AuthReply, token []byte, encAlgo string) (AuthKeys, error) {
	aes, err := Decrypt(minion, r.AES, encAlgo)
	if err != nil {
		return AuthKeys{}, fmt.Errorf("open auth reply: %w", err)
	}
	digest, err := PublicDecrypt(master, r.Sig)
	if err != nil || !bytes.Equal(digest, AESDigest(aes)) {
		return AuthKeys{}, fmt.Errorf("open auth reply: aes signature: %w", ErrAuthentication)
	}
	key := string(aes)
	if before, after, ok := strings.Cut(key, "_|-"); ok {
		key = before
		if token != nil && after != string(token) {
			return AuthKeys{}, fmt.Errorf("open auth reply: token mismatch: %w", ErrAuthentication)
		}
	} else if token != nil {
		if r.Token == nil {
			return AuthKeys{}, fmt.Errorf("open auth reply: no token: %w", ErrAuthentication)
		}
		back, err := Decrypt(minion, r.Token, encAlgo)
		if err != nil || !bytes.Equal(back, token) {
			return AuthKeys{}, fmt.Errorf("open auth reply: token mismatch: %w", ErrAuthentication)
		}
	}
	session, err := Decrypt(minion, r.Session, encAlgo)
	if err != nil {
		return AuthKeys{}, fmt.Errorf("open auth reply: session: %w", err)
	}
	return AuthKeys{AES: key, Session: string(session)}, nil
}
