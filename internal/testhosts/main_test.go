package testhosts_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/brinesalt/brine/internal/testhosts"
)

// TestMain fails the package when a test leaves goroutines behind, such as
// the reapers of sshd processes that Close did not wait for. A test binary
// re-run as another user to play a part (testhosts.HelperMain) does only
// that.
func TestMain(m *testing.M) {
	if code, ok := testhosts.HelperMain(); ok {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
