package crypt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// ErrSDBUnsupported is a passphrase option given as an sdb:// URI,
// which Brine cannot resolve (it has no sdb modules).
var ErrSDBUnsupported = errors.New("sdb:// values are not supported; put the passphrase itself in the config file (mode 0600)")

// KeyPass is a passphrase option's value (signing_key_pass) as
// salt/crypt.py and salt/key.py read it through sdb_get: a plain value
// is the passphrase; absent or null is "" (the key is not encrypted).
// Passphrases come only from the config file, never from argv or the
// environment, and are never logged: errors name the option, not the
// value.
func KeyPass(option string, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	s := ordered.KeyString(v)
	if strings.HasPrefix(s, "sdb://") {
		return "", fmt.Errorf("%s: %w", option, ErrSDBUnsupported)
	}
	return s, nil
}
