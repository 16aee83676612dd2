// Package crypt holds the cryptography of Salt's master/minion protocol as
// salt/crypt.py does it, byte-compatible with Salt 3006: RSA key pairs in
// Salt's PEM files, RSA-OAEP encryption, PKCS#1 v1.5 signatures, the
// X9.31 "private_encrypt" signatures used for the AES key digest and the
// request token, key fingerprints (salt-key -f), and Crypticle, the
// AES-CBC + HMAC-SHA256 session cipher.
package crypt
