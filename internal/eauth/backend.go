package eauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
)

// Backend checks a user's password: the auth function of a Salt eauth
// module (salt/auth/<name>.py). Authenticate answers false for wrong
// credentials; an error is a backend that could not decide (a missing
// password file, PAM not built in), which LoadAuth treats as a failure
// too, and which the master logs.
type Backend interface {
	Authenticate(ctx context.Context, username, password string) (bool, error)
}

// Grouper is a backend that knows a user's groups (the groups function
// of salt/auth/pam.py); external_auth's group% entries apply only to
// users of such backends, as in Salt.
type Grouper interface {
	Groups(ctx context.Context, username string) ([]string, error)
}

// Auto is salt/auth/auto.py: every user and password is accepted. It is
// for tests, never for production.
type Auto struct{}

// Authenticate accepts everyone.
func (Auto) Authenticate(context.Context, string, string) (bool, error) { return true, nil }

// SharedSecret is salt/auth/sharedsecret.py: the password must be the
// master's sharedsecret option, whatever the user name. Without the
// option nobody authenticates (Salt compares the password with None).
type SharedSecret struct {
	Secret string
	Set    bool
}

// Authenticate compares the password with the secret in constant time.
func (s SharedSecret) Authenticate(_ context.Context, _, password string) (bool, error) {
	if !s.Set {
		return false, errors.New("sharedsecret eauth: the master has no sharedsecret option")
	}
	return subtle.ConstantTimeCompare([]byte(password), []byte(s.Secret)) == 1, nil
}

// Unavailable is a configured backend Brine does not provide (ldap,
// rest, django, …): it refuses everyone, saying why.
type Unavailable struct{ Name, Why string }

// Authenticate refuses.
func (u Unavailable) Authenticate(context.Context, string, string) (bool, error) {
	return false, fmt.Errorf("%s eauth: %s", u.Name, u.Why)
}
