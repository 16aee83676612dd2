// Package conformance runs the shared Salt conformance cases against
// Brine's salt-call: it builds cmd/salt-call, runs the cases with the
// suite's run.py and checks the outputs with its compare.py. The suite
// lives beside the checkout (../shared/conformance from the repository
// root) or wherever BRINE_CONFORMANCE points.
package conformance

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot walks up from the test's directory to the go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// suiteDir finds the conformance suite.
func suiteDir(t *testing.T, root string) string {
	t.Helper()
	cands := []string{os.Getenv("BRINE_CONFORMANCE"), filepath.Join(root, "..", "shared", "conformance")}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(c, "run.py")); err == nil {
			abs, err := filepath.Abs(c)
			if err != nil {
				t.Fatal(err)
			}
			return abs
		}
	}
	t.Skip("conformance suite not found (set BRINE_CONFORMANCE)")
	return ""
}

// parseCompare returns the failing case names from compare.py's output.
func parseCompare(out []byte) (failed []string, summary string) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "FAIL "):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "FAIL "), ":")
			failed = append(failed, strings.TrimSpace(name))
		case strings.Contains(line, " passed, ") && strings.HasSuffix(line, " failed"):
			summary = line
		}
	}
	return failed, summary
}

func TestParseCompare(t *testing.T) {
	out := []byte("PASS 001-a\nFAIL 002-b\n    retcode 0 != 2\nFAIL 003-c: no actual output (x)\n1 passed, 2 failed\n")
	failed, summary := parseCompare(out)
	if strings.Join(failed, ",") != "002-b,003-c" || summary != "1 passed, 2 failed" {
		t.Fatalf("parseCompare = %q, %q", failed, summary)
	}
}

func TestConformance(t *testing.T) {
	root := repoRoot(t)
	suite := suiteDir(t, root)
	runSuite(t, root, suite, filepath.Join(suite, "cases"), "")
}

// TestProjectCases runs the cases this repository adds in testdata,
// written from Salt 3006's code for behaviour the shared suite does not
// cover (parallel states, state.top, show_states, state.disable, …),
// with the suite's run.py and compare.py, every comment compared. They
// run in this package because run.py wipes /tmp/conf-* before each case.
func TestProjectCases(t *testing.T) {
	root := repoRoot(t)
	suite := suiteDir(t, root)
	runSuite(t, root, suite, filepath.Join(root, "internal", "conformance", "testdata", "cases"),
		filepath.Join(root, "internal", "conformance", "testdata", "expected"), "--all-comments")
}

// runSuite builds salt-call, runs the cases in casesDir with the suite's
// run.py and checks the outputs against expected ("" for the suite's
// own) with its compare.py.
func runSuite(t *testing.T, root, suite, casesDir, expected string, compareArgs ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs every conformance case")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not available")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "salt-call")
	build := exec.Command("go", "build", "-o", bin, "./cmd/salt-call")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build salt-call: %v\n%s", err, out)
	}
	actual := filepath.Join(tmp, "actual")
	args := []string{filepath.Join(suite, "run.py"), bin, casesDir, actual}
	var only []string
	if o := os.Getenv("BRINE_CONFORMANCE_ONLY"); o != "" {
		for _, p := range strings.Split(o, ",") {
			only = append(only, "--only", p)
		}
	}
	args = append(args, only...)
	if out, err := exec.Command("python3", args...).CombinedOutput(); err != nil {
		t.Fatalf("run.py: %v\n%s", err, out)
	}
	cargs := append([]string{filepath.Join(suite, "compare.py"), actual}, only...)
	if expected != "" {
		cargs = append(cargs, "--expected", expected)
	}
	cmp := exec.Command("python3", append(cargs, compareArgs...)...)
	out, _ := cmp.CombinedOutput()
	failed, summary := parseCompare(out)
	t.Log(summary)
	if summary == "" {
		t.Fatalf("compare.py printed no summary:\n%s", out)
	}
	if len(failed) > 0 {
		t.Errorf("%d conformance cases fail: %s\n\n%s", len(failed), strings.Join(failed, ", "), out)
	}
}
