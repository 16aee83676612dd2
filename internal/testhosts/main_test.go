package testhosts_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind, such as
// the reapers of sshd processes that Close did not wait for.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
