package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// testOutputOptions runs salt's output options against the cluster's
// m1 and m2 (salt/cli/salt.py, salt/output/__init__.py).
func testOutputOptions(t *testing.T, c *clustertest.Cluster) {
	t.Run("static json is one document", func(t *testing.T) {
		out, code := c.Run("salt", "*", "test.ping", "--out", "json", "--static")
		docs := clustertest.JSONDocs(t, out)
		if code != 0 || len(docs) != 1 {
			t.Fatalf("--static: exit %d, %d documents:\n%s", code, len(docs), out)
		}
		if d := cmp.Diff(map[string]any{"m1": true, "m2": true}, docs[0]); d != "" {
			t.Errorf("--static document (-want +got):\n%s", d)
		}
		out, code = c.Run("salt", "*", "test.ping", "--out", "json")
		if docs := clustertest.JSONDocs(t, out); code != 0 || len(docs) != 2 {
			t.Fatalf("without --static Salt prints one document per minion: exit %d\n%s", code, out)
		}
	})

	t.Run("exit codes", func(t *testing.T) {
		// Salt's --static path passes no retcode: a failing minion
		// still exits 0.
		out, code := c.Run("salt", "*", "test.retcode", "3", "--static", "--out", "json")
		if docs := clustertest.JSONDocs(t, out); code != 0 || len(docs) != 1 || len(docs[0]) != 2 {
			t.Fatalf("--static with failures: exit %d\n%s", code, out)
		}
		out, code = c.Run("salt", "*", "test.retcode", "3")
		if code != 1 || !strings.Contains(out, "ERROR: Minions returned with non-zero exit code\n") {
			t.Fatalf("failing minions: exit %d\n%s", code, out)
		}
		// A batch exits with the highest retcode.
		out, code = c.Run("salt", "*", "test.retcode", "3", "-b", "1")
		if code != 3 || strings.Count(out, "Executing run on") != 2 {
			t.Fatalf("batch with failures: exit %d\n%s", code, out)
		}
		out, code = c.Run("salt", "*", "test.retcode", "3", "-b", "1", "--failhard")
		if code != 3 || strings.Count(out, "Executing run on") != 1 || !strings.Contains(out, "Batch run stopped due to failhard") {
			t.Fatalf("batch --failhard: exit %d\n%s", code, out)
		}
		out, code = c.Run("salt", "nobody", "test.ping", "--static", "--out", "json")
		if code != 2 || !strings.Contains(out, "{}\nERROR: No return received\n") {
			t.Fatalf("--static without minions: exit %d\n%s", code, out)
		}
	})

	t.Run("out-file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "out.txt")
		out, code := c.Run("salt", "*", "test.ping", "--out-file", f, "--show-jid")
		got, _ := os.ReadFile(f)
		if code != 0 || !strings.Contains(string(got), "m1:\n    True\n") || !strings.Contains(string(got), "m2:\n    True\n") {
			t.Fatalf("--out-file: exit %d, file:\n%s", code, got)
		}
		// Only the outputters' documents go to the file (display_output);
		// the jid line stays on stdout.
		if strings.Contains(out, "True") || !strings.Contains(out, "jid: ") || strings.Contains(string(got), "jid") {
			t.Errorf("stdout:\n%s\nfile:\n%s", out, got)
		}
		c.Run("salt", "m1", "test.ping", "--out-file", f, "--out-file-append", "--out", "json", "--static")
		got, _ = os.ReadFile(f)
		if !strings.HasPrefix(string(got), "m") || !strings.HasSuffix(string(got), "{\n    \"m1\": true\n}\n") {
			t.Fatalf("--out-file-append:\n%s", got)
		}
		c.Run("salt", "m2", "test.ping", "--out-file", f)
		if got, _ = os.ReadFile(f); string(got) != "m2:\n    True\n" {
			t.Fatalf("--out-file without append keeps old output:\n%s", got)
		}
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("--out-file mode: %v %v", st, err)
		}
		out, code = c.Run("salt", "*", "test.ping", "--out-file", filepath.Join(f, "not-a-dir"))
		if code != 2 || !strings.Contains(out, "not-a-dir") {
			t.Errorf("unwritable --out-file: exit %d\n%s", code, out)
		}
	})

	t.Run("state output", func(t *testing.T) {
		sls := "changed:\n  test.succeed_with_changes: []\nsame:\n  test.succeed_without_changes: []\n"
		if err := os.WriteFile(filepath.Join(c.Dir, "srv/salt/outopts.sls"), []byte(sls), 0o600); err != nil {
			t.Fatal(err)
		}
		out, code := c.Run("salt", "m1", "state.apply", "outopts", "--state-output", "terse")
		if code != 0 || !strings.Contains(out, "Name: changed - Function: test.succeed_with_changes - Result: Changed") ||
			strings.Contains(out, "ID: changed") {
			t.Fatalf("--state-output terse: exit %d\n%s", code, out)
		}
		for _, flags := range [][]string{{"--state_verbose", "False"}, {"--output-diff"}} {
			out, _ = c.Run("salt", append([]string{"m1", "state.apply", "outopts"}, flags...)...)
			if !strings.Contains(out, "ID: changed") || strings.Contains(out, "ID: same") {
				t.Fatalf("%v:\n%s", flags, out)
			}
		}
		// --static prints state functions with highstate (get_printout).
		out, _ = c.Run("salt", "*", "state.apply", "outopts", "--static", "--state_output", "mixed")
		if !strings.Contains(out, "Summary for m1") || !strings.Contains(out, "Summary for m2") ||
			!bytes.Contains([]byte(out), []byte("Name: same - Function: test.succeed_without_changes - Result: Clean")) {
			t.Fatalf("--static state.apply:\n%s", out)
		}
	})

	t.Run("colour", func(t *testing.T) {
		// Not a terminal: plain unless forced (get_printout).
		if out, _ := c.Run("salt", "m1", "test.ping"); strings.Contains(out, "\x1b[") {
			t.Errorf("colour on a pipe:\n%q", out)
		}
		out, _ := c.Run("salt", "m1", "test.ping", "--force-color", "--no-color")
		if !strings.Contains(out, "\x1b[0;36mm1\x1b[0;0m:") {
			t.Errorf("--force-color:\n%q", out)
		}
	})

	t.Run("summary", func(t *testing.T) {
		out, _ := c.Run("salt", "*", "test.retcode", "3", "--summary", "-v")
		if !strings.Contains(out, "# of minions targeted: 2\n# of minions returned: 2\n# of minions that did not return: 0\n# of minions with errors: 2\nMinions with failures: m1 m2\n") {
			t.Fatalf("--summary -v:\n%s", out)
		}
		// Salt prints the summary only when --out was not given.
		if out, _ = c.Run("salt", "*", "test.ping", "--summary", "--out", "json"); strings.Contains(out, "Summary") {
			t.Fatalf("--summary with --out:\n%s", out)
		}
	})
}

// testSilentMinion needs an accepted minion that is not running (m4).
func testSilentMinion(t *testing.T, c *clustertest.Cluster) {
	out, code := c.Run("salt", "*", "test.ping", "-t", "1", "--summary")
	if code != 1 || !strings.Contains(out, "m4:\n    Minion did not return. [No response]") ||
		!strings.Contains(out, "# of minions that did not return: 1\n") {
		t.Fatalf("silent m4: exit %d\n%s", code, out)
	}
	out, code = c.Run("salt", "*", "test.ping", "-t", "1", "--hide-timeout")
	if code != 0 || strings.Contains(out, "m4") || !strings.Contains(out, "m1:\n    True") {
		t.Fatalf("--hide-timeout: exit %d\n%s", code, out)
	}
	// -v makes LocalClient expect every minion again.
	out, code = c.Run("salt", "*", "test.ping", "-t", "1", "--hide-timeout", "-v")
	if code != 1 || !strings.Contains(out, "m4:\n    Minion did not return") {
		t.Fatalf("--hide-timeout -v: exit %d\n%s", code, out)
	}
	// Batches leave out what does not answer test.ping (salt/cli/batch.py).
	out, code = c.Run("salt", "*", "test.ping", "-b", "1")
	if code != 0 || !strings.Contains(out, "Minion m4 did not respond. No job will be sent.\n") ||
		strings.Count(out, "Executing run on") != 2 {
		t.Fatalf("batch with silent m4: exit %d\n%s", code, out)
	}
	out, code = c.Run("salt", "*", "test.ping", "--static", "--out", "json")
	docs := clustertest.JSONDocs(t, out)
	if code != 0 || len(docs) != 1 {
		t.Fatalf("--static with silent m4: exit %d\n%s", code, out)
	}
	if d := cmp.Diff(map[string]any{"m1": true, "m2": true}, docs[0]); d != "" {
		t.Errorf("--static with silent m4 (-want +got):\n%s", d)
	}
}
