package minion_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a master or minion leaves a goroutine
// behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
