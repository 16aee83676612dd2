//go:build cgo

package pam

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/pamtest"
)

// TestPAM authenticates a real user through libpam: the test runs itself
// again inside a pamtest namespace, where the user exists.
func TestPAM(t *testing.T) {
	f, err := pamtest.Load()
	if err != nil {
		t.Fatal(err)
	}
	if f == nil {
		f = pamtest.New(t, "brinepam2", "correct horse", "brinepamops")
		out, err := f.Command(os.Args[0], "-test.run=^TestPAM$", "-test.v", "-test.count=1").CombinedOutput()
		t.Logf("in the namespace:\n%s", out)
		if err != nil || !strings.Contains(string(out), "--- PASS: TestPAM") {
			t.Fatalf("the namespaced run failed: %v", err)
		}
		return
	}
	ctx := context.Background()
	b := New(f.Service)
	for _, tc := range []struct {
		user, pw string
		want     bool
	}{
		{f.User, f.Password, true},
		{f.User, f.Password + "x", false},
		{f.User, "", false},
		{"brine-no-such-user", f.Password, false},
	} {
		ok, err := b.Authenticate(ctx, tc.user, tc.pw)
		if ok != tc.want || err != nil {
			t.Errorf("Authenticate(%s, %d-char password) = %v, %v; want %v", tc.user, len(tc.pw), ok, err, tc.want)
		}
	}
	// Salt's default service, Debian's login stack (pam_faildelay costs
	// only failures).
	if ok, err := New("").Authenticate(ctx, f.User, f.Password); !ok || err != nil {
		t.Errorf("service login: %v, %v", ok, err)
	}
	g, err := b.Groups(ctx, f.User)
	if err != nil || !slices.Contains(g, f.Group) || !slices.Contains(g, f.User) {
		t.Errorf("Groups = %v, %v; want %s and the primary group %s", g, err, f.Group, f.User)
	}
	// A service without a file is PAM's "other" service, which Debian
	// points at the common stacks: a wrong password still fails there.
	if ok, err := New("brine-no-such-service").Authenticate(ctx, f.User, "wrong"); ok || err != nil {
		t.Errorf("service other with a wrong password: %v, %v", ok, err)
	}
}
