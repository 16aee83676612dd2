package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

func TestUpExecDown(t *testing.T) {
	testhosts.RequireRoot(t, "the detached demo cluster is exercised as root")
	ctx := t.Context()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"up", "-n", "2", "-dir", dir, "-no-python", "host2"}, &out, &errb); code != 0 {
		t.Fatalf("up: exit %d: %s", code, errb.String())
	}
	t.Cleanup(func() { run(ctx, []string{"down", "-dir", dir}, &out, &errb) })
	if code := run(ctx, []string{"up", "-n", "1", "-dir", dir}, &out, &errb); code == 0 {
		t.Error("second up on the same directory succeeded")
	}
	for _, f := range []string{"roster", "known_hosts", "key", "state.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("up did not write %s: %v", f, err)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{args: []string{"host1", "--", "hostname"}, out: "host1\n"},
		{args: []string{"host1", "--", "sh", "-c", "'exit 3'"}, code: 3},
		{args: []string{"host2", "--", "command", "-v", "python3"}, code: 127},
		{args: []string{"host1", "--", "command -v python3 >/dev/null && echo yes"}, out: "yes\n"},
	} {
		out.Reset()
		code := run(ctx, append([]string{"exec", "-dir", dir}, tc.args...), &out, &errb)
		if code != tc.code || (tc.out != "" && out.String() != tc.out) {
			t.Errorf("exec %q: exit %d, %q; want %d, %q", tc.args, code, out.String(), tc.code, tc.out)
		}
	}
	if code := run(ctx, []string{"down", "-dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("down: exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "state.json")); err == nil {
		t.Error("state.json left after down")
	}
	errb.Reset()
	if code := run(ctx, []string{"exec", "-dir", dir, "host1", "--", "true"}, &out, &errb); code == 0 ||
		!strings.Contains(errb.String(), "state.json") {
		t.Errorf("exec after down: exit %d, %q", code, errb.String())
	}
}
