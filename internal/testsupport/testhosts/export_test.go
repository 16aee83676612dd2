package testhosts

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// helperEnv names the variable under which a test re-runs this test binary
// as another user to do one thing (see HelperMain).
const helperEnv = "BRINE_TESTHOSTS_HELPER"

// HelperMain does what helperEnv asks of this test binary, when it is set,
// and reports its exit code; TestMain calls it before running any test.
//
//	foreign-teardown:C  as a harness without root would on closing or
//	                    sweeping its own cluster C: Cleanup, then teardown
//	                    of C with an empty work directory.
func HelperMain() (code int, ok bool) {
	v := os.Getenv(helperEnv)
	if v == "" {
		return 0, false
	}
	c, found := strings.CutPrefix(v, "foreign-teardown:")
	if !found {
		fmt.Fprintf(os.Stderr, "unknown %s=%s\n", helperEnv, v)
		return 2, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "brine-foreign-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	defer os.RemoveAll(dir)
	if err := Cleanup(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "cleanup:", err)
	}
	if err := teardown(ctx, atoi(c), filepath.Join(dir, "c")); err != nil {
		fmt.Fprintln(os.Stderr, "teardown:", err)
	}
	fmt.Println("helper done")
	return 0, true
}

// CopyTestBinary copies this test binary into a fresh directory that every
// user can read, for re-running it as the login user, and returns its path.
func CopyTestBinary(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "brine-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "testhosts.test")
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}
