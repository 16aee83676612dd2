package testhosts_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestMain fails the package when a test leaves goroutines behind, such as
// the reapers of sshd processes that Close did not wait for, or changed the
// mode or owner of the controller's /, /tmp, /var/tmp or /run (which the
// hosts' private directories are mounted over). A test binary re-run as
// another user to play a part (testhosts.HelperMain) does only that.
func TestMain(m *testing.M) {
	if code, ok := testhosts.HelperMain(); ok {
		os.Exit(code)
	}
	os.Exit(testhosts.GuardSystemDirs(func() int {
		code := m.Run()
		if err := goleak.Find(); code == 0 && err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
		return code
	}))
}
