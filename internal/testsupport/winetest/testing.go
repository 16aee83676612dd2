//go:build !windows

package winetest

import (
	"context"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// New starts a prefix for t in a temporary directory and ends it with
// the test. A machine without Wine, mingw-w64 or root skips t through
// testhosts.Skip (a failure under BRINE_REQUIRE_HOSTS=1).
func New(t testing.TB, opts ...Option) *Wine {
	t.Helper()
	if why := Missing(); why != "" {
		testhosts.Skip(t, "Wine harness: "+why)
	}
	w, err := Start(context.Background(), t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}
