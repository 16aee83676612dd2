package crypt

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"hash"
	"math/big"
	"strings"

	"github.com/brinesalt/brine/internal/protocol"
)

// Algorithm names as Salt's options and _auth loads spell them (the
// same values as the protocol package's).
const (
	OAEPSHA1       = protocol.OAEPSHA1
	OAEPSHA224     = protocol.OAEPSHA224
	PKCS1v15SHA1   = protocol.PKCS1v15SHA1
	PKCS1v15SHA224 = protocol.PKCS1v15SHA224
)

// encryptionHash returns the hash of a valid encryption algorithm
// (BaseKey.parse_padding_for_encryption/parse_hash).
func encryptionHash(algo string) (func() hash.Hash, error) {
	switch algo {
	case OAEPSHA1:
		return sha1.New, nil
	case OAEPSHA224:
		return sha256.New224, nil
	}
	return nil, fmt.Errorf("invalid encryption algorithm %q: %w", algo, ErrUnsupportedAlgorithm)
}

func signingHash(algo string) (crypto.Hash, error) {
	switch algo {
	case PKCS1v15SHA1:
		return crypto.SHA1, nil
	case PKCS1v15SHA224:
		return crypto.SHA224, nil
	}
	return 0, fmt.Errorf("invalid signing algorithm %q: %w", algo, ErrUnsupportedAlgorithm)
}

// Encrypt is PublicKey.encrypt: RSA-OAEP with MGF1 and the label empty,
// the hash named by algo ("OAEP-SHA1" or "OAEP-SHA224").
func Encrypt(pub *rsa.PublicKey, msg []byte, algo string) ([]byte, error) {
	h, err := encryptionHash(algo)
	if err != nil {
		return nil, err
	}
	out, err := rsa.EncryptOAEP(h(), rand.Reader, pub, msg, nil)
	if err != nil {
		return nil, fmt.Errorf("rsa encrypt: %w", err)
	}
	return out, nil
}

// Decrypt is PrivateKey.decrypt, the inverse of Encrypt.
func Decrypt(priv *rsa.PrivateKey, ciphertext []byte, algo string) ([]byte, error) {
	h, err := encryptionHash(algo)
	if err != nil {
		return nil, err
	}
	out, err := rsa.DecryptOAEP(h(), nil, priv, ciphertext, nil)
	if err != nil {
		return nil, fmt.Errorf("rsa decrypt: %w", ErrDecrypt)
	}
	return out, nil
}

// Sign is PrivateKey.sign: PKCS#1 v1.5 over the SHA-1 or SHA-224 digest
// of msg.
func Sign(priv *rsa.PrivateKey, msg []byte, algo string) ([]byte, error) {
	h, err := signingHash(algo)
	if err != nil {
		return nil, err
	}
	d := h.New()
	d.Write(msg)
	sig, err := rsa.SignPKCS1v15(nil, priv, h, d.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("rsa sign: %w", err)
	}
	return sig, nil
}

// Verify is PublicKey.verify; a bad signature is ErrVerify.
func Verify(pub *rsa.PublicKey, msg, sig []byte, algo string) error {
	h, err := signingHash(algo)
	if err != nil {
		return err
	}
	d := h.New()
	d.Write(msg)
	if rsa.VerifyPKCS1v15(pub, h, d.Sum(nil), sig) != nil {
		return ErrVerify
	}
	return nil
}

// X9.31 padding bytes (OpenSSL rsa_x931.c).
const (
	x931HeaderShort = 0x6A
	x931HeaderLong  = 0x6B
	x931Fill        = 0xBB
	x931Sep         = 0xBA
	x931Trailer     = 0xCC
)

// PrivateEncrypt is salt.crypt.private_encrypt (PrivateKey.encrypt):
// OpenSSL's RSA_private_encrypt with RSA_X931_PADDING, through
// salt/utils/rsax931.py. Salt signs sha256(aes).hexdigest() with it in
// the _auth reply, and b"salt" as the request token "tok". The result is
// min(s, n-s) as OpenSSL returns for X9.31, left-padded to the modulus
// size. The private operation is blinded.
func PrivateEncrypt(priv *rsa.PrivateKey, msg []byte) ([]byte, error) {
	k := priv.Size()
	j := k - len(msg) - 2
	if j < 0 {
		return nil, fmt.Errorf("x931 sign: message of %d bytes too long for a %d-byte key", len(msg), k)
	}
	em := make([]byte, k)
	if j == 0 {
		em[0] = x931HeaderShort
	} else {
		em[0] = x931HeaderLong
		for i := 1; i < j; i++ {
			em[i] = x931Fill
		}
		em[j] = x931Sep
	}
	copy(em[j+1:], msg)
	em[k-1] = x931Trailer

	n := priv.N
	m := new(big.Int).SetBytes(em)
	s, err := blindedPrivate(priv, m)
	if err != nil {
		return nil, err
	}
	alt := new(big.Int).Sub(n, s)
	if s.Cmp(alt) > 0 {
		s = alt
	}
	return s.FillBytes(make([]byte, k)), nil
}

// blindedPrivate computes m^d mod n as (m·r^e)^d · r^-1 so the timing of
// the exponentiation does not depend on m.
func blindedPrivate(priv *rsa.PrivateKey, m *big.Int) (*big.Int, error) {
	n := priv.N
	e := big.NewInt(int64(priv.E))
	for range 10 {
		r, err := rand.Int(rand.Reader, n)
		if err != nil {
			return nil, fmt.Errorf("x931 sign: %w", err)
		}
		rInv := new(big.Int).ModInverse(r, n)
		if r.Sign() == 0 || rInv == nil {
			continue
		}
		c := new(big.Int).Exp(r, e, n)
		c.Mul(c, m).Mod(c, n)
		c.Exp(c, priv.D, n)
		c.Mul(c, rInv).Mod(c, n)
		return c, nil
	}
	return nil, fmt.Errorf("x931 sign: no blinding factor found")
}

// PublicDecrypt is PublicKey.decrypt: OpenSSL's RSA_public_decrypt with
// RSA_X931_PADDING, which recovers what PrivateEncrypt signed. A
// signature that does not unpad is ErrVerify.
func PublicDecrypt(pub *rsa.PublicKey, sig []byte) ([]byte, error) {
	k := pub.Size()
	if len(sig) > k {
		return nil, fmt.Errorf("x931 verify: signature longer than the modulus: %w", ErrVerify)
	}
	s := new(big.Int).SetBytes(sig)
	if s.Cmp(pub.N) >= 0 {
		return nil, fmt.Errorf("x931 verify: data too large for modulus: %w", ErrVerify)
	}
	m := new(big.Int).Exp(s, big.NewInt(int64(pub.E)), pub.N)
	if m.Bits() == nil || m.Bits()[0]&0xf != 12 {
		m.Sub(pub.N, m)
	}
	if m.Sign() < 0 || m.BitLen() > 8*k {
		return nil, fmt.Errorf("x931 verify: %w", ErrVerify)
	}
	return x931Unpad(m.FillBytes(make([]byte, k)))
}

// x931Unpad is RSA_padding_check_X931: header 0x6A, or 0x6B followed by
// at least one 0xBB and a 0xBA; trailer 0xCC.
func x931Unpad(em []byte) ([]byte, error) {
	bad := fmt.Errorf("x931 verify: bad padding: %w", ErrVerify)
	if len(em) < 2 || (em[0] != x931HeaderShort && em[0] != x931HeaderLong) {
		return nil, bad
	}
	p := em[1:]
	if em[0] == x931HeaderLong {
		i := 0
		for ; i < len(p) && p[i] == x931Fill; i++ {
		}
		if i == 0 || i >= len(p) || p[i] != x931Sep {
			return nil, bad
		}
		p = p[i+1:]
	}
	if len(p) == 0 || p[len(p)-1] != x931Trailer {
		return nil, bad
	}
	return append([]byte(nil), p[:len(p)-1]...), nil
}

// AESDigest is what the master signs with PrivateEncrypt in the _auth
// reply: hashlib.sha256(aes).hexdigest() as bytes, aes being the key
// string sent (with "_|-" and the token when auth_mode >= 2).
func AESDigest(aes []byte) []byte {
	sum := sha256.Sum256(aes)
	return []byte(strings.ToLower(fmt.Sprintf("%x", sum[:])))
}
