// Package pam is Salt's pam eauth backend (salt/auth/pam.py) on the
// system's libpam, through cgo: the password is given to the PAM
// conversation for every prompt that does not echo, then the account is
// checked (pam_acct_mgmt), and a user's groups come from the system
// group database.
//
// Built without cgo the package still compiles, and its backend refuses
// every user with ErrNoCgo, so only salt-master (built with
// CGO_ENABLED=1) links libpam; the thin binary never imports this
// package.
package pam

import (
	"context"
	"errors"

	"github.com/brinesalt/brine/internal/eauth"
)

// DefaultService is auth.pam.service's default.
const DefaultService = "login"

// ErrNoCgo is the refusal of a salt-master built without cgo.
var ErrNoCgo = errors.New("pam eauth needs a salt-master built with cgo")

// Backend authenticates users against a PAM service.
type Backend struct {
	// Service is auth.pam.service ("login" when empty).
	Service string
	// GroupsOf lists a user's groups; nil is the system group database
	// (eauth.SystemGroups). Tests inject their own.
	GroupsOf func(username string) ([]string, error)
}

var _ eauth.Grouper = (*Backend)(nil)

// New is the pam backend for the service.
func New(service string) *Backend { return &Backend{Service: service} }

func (b *Backend) service() string {
	if b.Service == "" {
		return DefaultService
	}
	return b.Service
}

// Groups is salt/auth/pam.py groups: the user's system groups.
func (b *Backend) Groups(_ context.Context, username string) ([]string, error) {
	if b.GroupsOf != nil {
		return b.GroupsOf(username)
	}
	return eauth.SystemGroups(username)
}

// Authenticate checks the password and the account through PAM. PAM
// cannot be interrupted: when ctx ends first the answer is a refusal and
// the PAM transaction finishes on its own.
func (b *Backend) Authenticate(ctx context.Context, username, password string) (bool, error) {
	type result struct {
		ok  bool
		err error
	}
	ch := make(chan result, 1)
	go func() {
		ok, err := authenticate(b.service(), username, password)
		ch <- result{ok, err}
	}()
	select {
	case r := <-ch:
		return r.ok, r.err
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
}
