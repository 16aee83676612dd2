// Package eauth is Salt's external authentication (salt/auth/__init__.py
// LoadAuth, salt/utils/minions.py CkMinions.auth_check and friends): the
// external_auth configuration, the backends that check a user's password
// (auto, sharedsecret, file here; pam in eauth/pam, which needs cgo), the
// ACL evaluation that decides what an authenticated user may run, and
// the localfs token store (salt/tokens/localfs.py).
//
// The package is pure Go and knows nothing of the master's minions: ACL
// checks that depend on targets take a TargetFunc that expands a target
// the way the master does.
package eauth
