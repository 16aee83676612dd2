package main

import (
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestE2EBadRegexInTargetFails: a regex Python rejects inside a compound
// target (P@, J@) or a -P target fails the run with an error naming the
// word, as a bad -E pattern does, instead of "No matching targets found
// in roster." and exit 0; no host is contacted for it.
func TestE2EBadRegexInTargetFails(t *testing.T) {
	c := testhosts.New(t, 1)
	e := newEnv(t, c, true)
	for _, args := range [][]string{
		{"-C", "P@os:(", "test.ping"},
		{"-C", "J@x:[", "test.ping"},
		{"-C", "host1 and P@os:deb(", "test.ping"},
		{"-P", "os:(", "test.ping"},
		{"-E", "[", "test.ping"},
	} {
		got, code, stderr := e.saltSSH(args...)
		if code == 0 || len(got) != 0 || !strings.Contains(stderr, args[1]) || strings.Contains(stderr, "No matching targets") {
			t.Errorf("salt-ssh %v: code %d, %v, stderr %q; want a failure naming %q", args, code, got, stderr, args[1])
		}
	}
	// A valid P@ still runs.
	if got, code, stderr := e.saltSSH("-C", "P@os:deb.*", "test.ping"); code != 0 || got["host1"] != true {
		t.Errorf("P@os:deb.*: code %d, %v\n%s", code, got, stderr)
	}
}
