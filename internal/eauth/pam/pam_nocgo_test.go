//go:build !cgo

package pam

import (
	"context"
	"errors"
	"testing"
)

func TestPAMWithoutCgo(t *testing.T) {
	ok, err := New("login").Authenticate(context.Background(), "root", "x")
	if ok || !errors.Is(err, ErrNoCgo) || err.Error() != "pam eauth needs a salt-master built with cgo" {
		t.Errorf("Authenticate = %v, %v; want the no-cgo refusal", ok, err)
	}
}
