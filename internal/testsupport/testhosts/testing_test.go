package testhosts_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// fakeTB records how New gives up; Skip and Fatal unwind like the real ones.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

type stop struct{}

func (f *fakeTB) Helper()             {}
func (f *fakeTB) Skip(args ...any)    { f.skipped = fmt.Sprint(args...); panic(stop{}) }
func (f *fakeTB) Fatal(args ...any)   { f.failed = fmt.Sprint(args...); panic(stop{}) }
func (f *fakeTB) Logf(string, ...any) {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(stop{})
}

func newWith(t *testing.T) (f *fakeTB) {
	f = &fakeTB{TB: t}
	defer func() {
		if r := recover(); r != nil && r != (stop{}) {
			panic(r)
		}
	}()
	testhosts.New(f, 1)
	return f
}

func TestNewWithoutSSHD(t *testing.T) {
	t.Setenv(testhosts.SSHDEnv, "/nonexistent/sshd")
	for _, tc := range []struct {
		require        string
		skips, failing bool
	}{
		{require: "", skips: true},
		{require: "0", skips: true},
		{require: "1", failing: true},
	} {
		t.Run("require="+tc.require, func(t *testing.T) {
			t.Setenv(testhosts.RequireEnv, tc.require)
			f := newWith(t)
			if got := f.skipped != ""; got != tc.skips {
				t.Errorf("skipped = %q, want skip=%v", f.skipped, tc.skips)
			}
			if got := f.failed != ""; got != tc.failing {
				t.Errorf("failed = %q, want failure=%v", f.failed, tc.failing)
			}
			msg := f.skipped + f.failed
			for _, want := range []string{"NO TEST HOSTS", "no sshd", "install-deps.sh", testhosts.RequireEnv} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

func TestEventually(t *testing.T) {
	calls := 0
	testhosts.Eventually(t, "the third call", time.Minute, func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Errorf("cond called %d times, want 3", calls)
	}
	f := &fakeTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != (stop{}) {
				panic(r)
			}
		}()
		testhosts.Eventually(f, "nothing", 0, func() bool { return false })
	}()
	if !strings.Contains(f.failed, "waiting for nothing") {
		t.Errorf("a condition that never holds: failed = %q", f.failed)
	}
}

// TestSkip: every end-to-end skip goes through testhosts.Skip, which fails
// the test instead when BRINE_REQUIRE_HOSTS=1.
func TestSkip(t *testing.T) {
	for _, tc := range []struct {
		require        string
		skips, failing bool
	}{
		{require: "", skips: true},
		{require: "1", failing: true},
	} {
		t.Run("require="+tc.require, func(t *testing.T) {
			t.Setenv(testhosts.RequireEnv, tc.require)
			f := &fakeTB{TB: t}
			func() {
				defer func() {
					if r := recover(); r != nil && r != (stop{}) {
						panic(r)
					}
				}()
				testhosts.Skip(f, "needs a unicorn")
			}()
			if (f.skipped != "") != tc.skips || (f.failed != "") != tc.failing {
				t.Errorf("skipped %q, failed %q; want skip=%v failure=%v", f.skipped, f.failed, tc.skips, tc.failing)
			}
			if msg := f.skipped + f.failed; !strings.Contains(msg, "needs a unicorn") || !strings.Contains(msg, "NOT RUN") {
				t.Errorf("message %q lacks the reason", msg)
			}
		})
	}
}
