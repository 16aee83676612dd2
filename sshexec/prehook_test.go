package sshexec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

// TestPreHook: ssh_pre_hook runs on the controller before each host is
// connected to; when it fails the host is not contacted and its result
// is the hook's {stdout, stderr, retcode}, as Salt's Single.run returns.
func TestPreHook(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	dir := t.TempDir()
	ok, bad := f.target(t, "ok"), f.target(t, "bad")
	ok.SSHPreHook = "echo ran-for-ok > " + filepath.Join(dir, "ok") + "; echo ignored"
	bad.SSHPreHook = "echo hook-out; echo hook-err >&2; exit 7"
	got := f.run(t, Options{}, Job{Raw: "echo remote"}, ok, bad)

	if data, err := os.ReadFile(filepath.Join(dir, "ok")); err != nil || string(data) != "ran-for-ok\n" {
		t.Errorf("hook of ok did not run locally: %q %v", data, err)
	}
	m, _ := got["ok"].Return.(*ordered.Map)
	if m == nil || m.Value("stdout") != "remote\n" || got["ok"].Retcode != 0 {
		t.Errorf("host with a passing hook = %+v, want the command's output only", got["ok"])
	}
	m, _ = got["bad"].Return.(*ordered.Map)
	if m == nil || m.Value("stdout") != "hook-out\n" || m.Value("stderr") != "hook-err\n" || m.Value("retcode") != 7 || got["bad"].Retcode != 7 {
		t.Errorf("host with a failing hook = %#v, want the hook's stdout, stderr and retcode 7", got["bad"])
	}
	if n := f.dials.Load(); n != 1 {
		t.Errorf("%d dials, want 1: a failing hook must stop the host before it is contacted", n)
	}
}
