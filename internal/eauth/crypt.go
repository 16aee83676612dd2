package eauth

import "errors"

// verifyCrypt checks an MD5-crypt ($1$, $apr1$) or SHA-crypt ($5$, $6$)
// hash.
func verifyCrypt(stored, password string) (bool, error) {
	return false, errors.New("file eauth: md5-crypt and sha-crypt htpasswd hashes are not verified yet")
}
