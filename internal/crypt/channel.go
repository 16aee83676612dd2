package crypt

import (
	"crypto/rsa"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// TokenPlaintext is what a minion signs as the "tok" of its requests.
var TokenPlaintext = []byte("salt")

// RequestToken is AsyncAuth.gen_token(b"salt"): the X9.31 signature a
// version 3 request carries as "tok".
func RequestToken(minion *rsa.PrivateKey) ([]byte, error) {
	return PrivateEncrypt(minion, TokenPlaintext)
}

// CheckRequestToken is ReqServerChannel.validate_token's test: tok must
// recover b"salt" with the minion's accepted key.
func CheckRequestToken(minion *rsa.PublicKey, tok []byte) bool {
	got, err := PublicDecrypt(minion, tok)
	return err == nil && string(got) == string(TokenPlaintext)
}

// SignClear is ReqServerChannel._clear_signed: the load packed and signed
// with the master key.
func SignClear(master *rsa.PrivateKey, load any, sigAlgo string) (*protocol.SignedClear, error) {
	body, err := protocol.Marshal(load)
	if err != nil {
		return nil, fmt.Errorf("sign clear reply: %w", err)
	}
	sig, err := Sign(master, body, sigAlgo)
	if err != nil {
		return nil, fmt.Errorf("sign clear reply: %w", err)
	}
	return &protocol.SignedClear{Load: body, Sig: sig}, nil
}

// OpenSignedClear verifies a signed clear reply with the master's key
// and unpacks its load (AsyncAuth.handle_signin_response).
func OpenSignedClear(master *rsa.PublicKey, sc *protocol.SignedClear, sigAlgo string) (any, error) {
	if err := Verify(master, sc.Load, sc.Sig, sigAlgo); err != nil {
		return nil, fmt.Errorf("open clear reply: %w", err)
	}
	v, err := protocol.Unmarshal(sc.Load)
	if err != nil {
		return nil, fmt.Errorf("open clear reply: %w", err)
	}
	return v, nil
}

// WrapPublish is PubServerChannel.wrap_payload: the load gets the next
// serial, is encrypted with the master AES Crypticle and, when sigAlgo is
// not empty (sign_pub_messages), the ciphertext is signed.
func WrapPublish(aes *Crypticle, master *rsa.PrivateKey, load *ordered.Map, serial int, sigAlgo string) (*protocol.Publish, error) {
	load = load.Copy()
	load.Set("serial", serial)
	enc, err := aes.Dumps(load, "")
	if err != nil {
		return nil, fmt.Errorf("wrap publish: %w", err)
	}
	p := &protocol.Publish{Load: enc}
	if sigAlgo != "" {
		if p.Sig, err = Sign(master, enc, sigAlgo); err != nil {
			return nil, fmt.Errorf("wrap publish: %w", err)
		}
		p.SigAlgo = sigAlgo
	}
	return p, nil
}

// OpenPublish is the minion's AsyncPubChannel._decode_payload: with
// requireSig (sign_pub_messages) the signature must be present and valid
// for the frame's sig_algo; then the load is decrypted (serial checked).
func OpenPublish(aes *Crypticle, master *rsa.PublicKey, p *protocol.Publish, requireSig bool) (any, error) {
	if err := VerifyPublish(master, p, requireSig); err != nil {
		return nil, err
	}
	return aes.Loads(p.Load, "")
}

// VerifyPublish is OpenPublish's signature check alone: with requireSig
// the publication must carry a signature, and a signature it carries
// must verify with the master's key (ErrAuthentication otherwise). A
// minion that decrypts first checks it only for what it would act on.
func VerifyPublish(master *rsa.PublicKey, p *protocol.Publish, requireSig bool) error {
	if !requireSig {
		return nil
	}
	if len(p.Sig) == 0 {
		return fmt.Errorf("open publish: message signing is enabled but the payload has no signature: %w", ErrAuthentication)
	}
	if err := Verify(master, p.Load, p.Sig, p.SigAlgo); err != nil {
		return fmt.Errorf("open publish: message signature failed to validate: %w", ErrAuthentication)
	}
	return nil
}

// SealPrivate is ReqServerChannel._encrypt_private (send_private, used for
// _pillar): a fresh Crypticle key is sent RSA-encrypted to the minion as
// "key"; under dictkey goes that Crypticle's encryption of
// {"data": msgpack({"key", "pillar", "nonce"}), "sig": sign(data)}.
// A false ret is sent as an empty map, as Salt does.
func SealPrivate(master *rsa.PrivateKey, minion *rsa.PublicKey, ret any, dictkey, nonce, encAlgo, sigAlgo string) (*ordered.Map, error) {
	keyString := GenerateKeyString()
	pcrypt, err := NewCrypticle(keyString)
	if err != nil {
		return nil, err
	}
	encKey, err := Encrypt(minion, []byte(keyString), encAlgo)
	if err != nil {
		return nil, fmt.Errorf("seal private reply: %w", err)
	}
	if b, ok := ret.(bool); ok && !b {
		ret = ordered.New()
	}
	tosign, err := protocol.Marshal(ordered.FromPairs("key", encKey, "pillar", ret, "nonce", nonce))
	if err != nil {
		return nil, fmt.Errorf("seal private reply: %w", err)
	}
	sig, err := Sign(master, tosign, sigAlgo)
	if err != nil {
		return nil, fmt.Errorf("seal private reply: %w", err)
	}
	body, err := pcrypt.Dumps(ordered.FromPairs("data", tosign, "sig", sig), "")
	if err != nil {
		return nil, fmt.Errorf("seal private reply: %w", err)
	}
	return ordered.FromPairs("key", encKey, dictkey, body), nil
}

// OpenPrivate is AsyncReqChannel.crypted_transfer_decode_dictentry's
// checks: decrypt the key, decrypt the entry, verify the master's
// signature, and require the signed key and nonce to match.
func OpenPrivate(minion *rsa.PrivateKey, master *rsa.PublicKey, reply *ordered.Map, dictkey, nonce, encAlgo, sigAlgo string) (any, error) {
	encKey, ok := protocol.AsBytes(reply.Value("key"))
	if !ok {
		return nil, fmt.Errorf("open private reply: no key: %w", protocol.ErrBadLoad)
	}
	keyString, err := Decrypt(minion, encKey, encAlgo)
	if err != nil {
		return nil, fmt.Errorf("open private reply: %w", err)
	}
	pcrypt, err := NewCrypticle(string(keyString))
	if err != nil {
		return nil, fmt.Errorf("open private reply: %w", err)
	}
	entry, ok := protocol.AsBytes(reply.Value(dictkey))
	if !ok {
		return nil, fmt.Errorf("open private reply: no %s: %w", dictkey, protocol.ErrBadLoad)
	}
	v, err := pcrypt.Loads(entry, "")
	if err != nil {
		return nil, fmt.Errorf("open private reply: %w", err)
	}
	signed, _ := v.(*ordered.Map)
	data, ok1 := protocol.AsBytes(signed.Value("data"))
	sig, ok2 := protocol.AsBytes(signed.Value("sig"))
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("open private reply: no data or sig: %w", protocol.ErrBadLoad)
	}
	if err := Verify(master, data, sig, sigAlgo); err != nil {
		return nil, fmt.Errorf("open private reply: pillar payload signature failed to validate: %w", ErrAuthentication)
	}
	dv, err := protocol.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("open private reply: %w", err)
	}
	dm, _ := dv.(*ordered.Map)
	if k, _ := protocol.AsBytes(dm.Value("key")); string(k) != string(encKey) {
		return nil, fmt.Errorf("open private reply: key verification failed: %w", ErrAuthentication)
	}
	if n, _ := dm.Value("nonce").(string); n != nonce {
		return nil, fmt.Errorf("open private reply: pillar nonce verification failed: %w", ErrNonce)
	}
	return dm.Value("pillar"), nil
}
