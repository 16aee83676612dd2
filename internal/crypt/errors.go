package crypt

import "errors"

// Sentinel errors; callers branch with errors.Is.
var (
	// ErrAuthentication is a message whose HMAC does not verify (Salt's
	// AuthenticationError "message authentication failed").
	ErrAuthentication = errors.New("message authentication failed")
	// ErrNonce is a reply whose nonce is not the request's (Salt's
	// "Nonce verification error").
	ErrNonce = errors.New("nonce verification error")
	// ErrInvalidKey is a key file or key string that cannot be used
	// (Salt's InvalidKeyError).
	ErrInvalidKey = errors.New("invalid key")
	// ErrUnsupportedAlgorithm is an encryption or signing algorithm name
	// Salt does not accept (Salt's UnsupportedAlgorithm).
	ErrUnsupportedAlgorithm = errors.New("unsupported algorithm")
	// ErrDecrypt is ciphertext that does not decrypt.
	ErrDecrypt = errors.New("decryption failed")
	// ErrVerify is a signature that does not verify.
	ErrVerify = errors.New("signature verification failed")
)
