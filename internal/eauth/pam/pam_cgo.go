//go:build cgo

package pam

import (
	"errors"
	"fmt"

	"github.com/msteinert/pam/v2"
)

// authenticate is salt/auth/pam.py _authenticate: pam_start with a
// conversation that answers the password to prompts that do not echo
// (and nothing to the rest), pam_authenticate, then pam_acct_mgmt. A
// wrong password or a refused account is false without an error; an
// error is PAM failing to start.
func authenticate(service, username, password string) (bool, error) {
	conv := func(s pam.Style, _ string) (string, error) {
		if s == pam.PromptEchoOff {
			return password, nil
		}
		return "", nil
	}
	tx, err := pam.StartFunc(service, username, conv)
	if err != nil {
		return false, fmt.Errorf("pam eauth: start service %s: %w", service, err)
	}
	defer tx.End()
	if err := tx.Authenticate(0); err != nil {
		return false, refusal(err)
	}
	if err := tx.AcctMgmt(0); err != nil {
		return false, refusal(err)
	}
	return true, nil
}

// refusal is nil for PAM's answers about the user (bad password,
// unknown user, expired account), which are a plain false; anything
// else is worth an error.
func refusal(err error) error {
	for _, e := range []error{pam.ErrAuth, pam.ErrUserUnknown, pam.ErrAcctExpired, pam.ErrPermDenied,
		pam.ErrNewAuthtokReqd, pam.ErrMaxtries, pam.ErrCredInsufficient, pam.ErrAuthinfoUnavail} {
		if errors.Is(err, e) {
			return nil
		}
	}
	return fmt.Errorf("pam eauth: %w", err)
}
