package thin_test

import (
	"context"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/brinesalt/brine/thin"
)

// asThinEnv makes the test binary act as the thin binary, so that a test
// can have it run by (a fake) sudo the way the thin sudo helper runs
// itself.
const asThinEnv = "BRINE_THIN_TEST_AS_THIN"

func TestMain(m *testing.M) {
	if os.Getenv(asThinEnv) == "1" {
		os.Exit(thin.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}
