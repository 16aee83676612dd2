package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestInvalidStateKeyword checks that a state given a keyword its
// function does not take aborts the run as salt/cli/caller.py reports a
// SaltInvocationError: "Passed invalid arguments", the usage, exit 1.
func TestInvalidStateKeyword(t *testing.T) {
	dir := t.TempDir()
	salt, conf := filepath.Join(dir, "salt"), filepath.Join(dir, "conf")
	writeFile(t, filepath.Join(salt, "bad.sls"), "bad:\n  test.configurable_test_state:\n    - bogus: 1\n")
	writeFile(t, filepath.Join(conf, "minion"), "id: test-minion\nfile_client: local\ncachedir: "+dir+"/cache\n"+
		"file_roots:\n  base:\n    - "+salt+"\n")
	const msg = "\nPassed invalid arguments: 'bogus' is an invalid keyword argument for 'test.configurable_test_state'.\n\nUsage:\n"
	for _, args := range [][]string{
		{"--local", "-c", conf, "state.sls", "bad"},
		{"--local", "-c", conf, "state.single", "test.configurable_test_state", "name=x", "bogus=1"},
	} {
		t.Run(strings.Join(args[3:], " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), args, nil, &out, &errb); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if !strings.HasSuffix(errb.String(), msg) {
				t.Errorf("stderr %q does not end in %q", errb.String(), msg)
			}
			if !strings.Contains(out.String(), args[3]) {
				t.Errorf("stdout lacks the usage:\n%s", out.String())
			}
		})
	}
}
