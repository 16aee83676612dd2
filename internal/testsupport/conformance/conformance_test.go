// Package conformance runs Salt 3006's recorded conformance cases against
// Brine's salt-call: it builds cmd/salt-call, runs the cases with the
// suite's run.py and checks the outputs with its compare.py. The suite is
// vendored in testdata/salt3006 (see its README for where it comes from).
package conformance

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
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

// suiteDir is the vendored Salt 3006 suite: cases, expected outputs,
// run.py, compare.py and minion.template.
func suiteDir(root string) string {
	return filepath.Join(root, "internal", "testsupport", "conformance", "testdata", "salt3006")
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
	suite := suiteDir(root)
	runSuite(t, root, suite, filepath.Join(suite, "cases"), "")
}

// TestProjectCases runs the cases this repository adds in testdata,
// written from Salt 3006's code for behaviour the shared suite does not
// cover (parallel states, state.top, show_states, state.disable, …),
// with the suite's run.py and compare.py, every comment compared. They
// run in this package because run.py wipes /tmp/conf-* before each case.
func TestProjectCases(t *testing.T) {
	root := repoRoot(t)
	suite := suiteDir(root)
	runSuite(t, root, suite, filepath.Join(root, "internal", "testsupport", "conformance", "testdata", "cases"),
		filepath.Join(root, "internal", "testsupport", "conformance", "testdata", "expected"), "--all-comments")
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
		testhosts.Skip(t, "python3 not installed (scripts/install-deps.sh)")
	}
	testhosts.RequireRoot(t, "the cases run as root, each in a private mount namespace")
	tmp := t.TempDir()
	work := privateTmp(t, tmp)
	bin := filepath.Join(work, "salt-call")
	build := exec.Command("go", "build", "-o", bin, "./cmd/salt-call")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build salt-call: %v\n%s", err, out)
	}
	var only []string
	if o := os.Getenv("BRINE_CONFORMANCE_ONLY"); o != "" {
		for _, p := range strings.Split(o, ",") {
			only = append(only, "--only", p)
		}
	}
	if out, err := runInPrivateTmp(tmp, suite, casesDir, only).CombinedOutput(); err != nil {
		t.Fatalf("run.py: %v\n%s", err, out)
	}
	actual := filepath.Join(work, "actual")
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

// privateTmp makes tmp/tmp, the /tmp the cases will see (1777 like the
// real one), and in it the work directory with mount points for the suite
// and the cases; it returns the work directory's controller path.
func privateTmp(t *testing.T, tmp string) string {
	t.Helper()
	priv := filepath.Join(tmp, "tmp")
	work := filepath.Join(priv, "work")
	for _, d := range []string{priv, work, filepath.Join(work, "suite"), filepath.Join(work, "cases")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(priv, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	return work
}

// runInPrivateTmp returns the command that runs run.py in a private mount
// namespace whose /tmp is tmp/tmp: run.py wipes /tmp/conf-* and copies
// cases' files there, and salt-call writes under /tmp/conf-NNN, none of
// which may touch the machine's /tmp (a test changes nothing outside its
// own directories). Inside, the work directory is /tmp/work; the suite
// and cases are bound in before /tmp is covered, so a checkout under
// /tmp works too.
func runInPrivateTmp(tmp, suite, casesDir string, only []string) *exec.Cmd {
	const script = `set -e
priv="$1"; suite="$2"; cases="$3"; shift 3
mount --bind "$suite" "$priv/work/suite"
mount --bind "$cases" "$priv/work/cases"
mount --rbind "$priv" /tmp
cd /tmp/work
exec python3 /tmp/work/suite/run.py /tmp/work/salt-call /tmp/work/cases /tmp/work/actual "$@"
`
	args := append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh",
		filepath.Join(tmp, "tmp"), suite, casesDir}, only...)
	cmd := exec.Command("unshare", args...)
	// The checkout itself may lie under /tmp, which the private /tmp
	// hides: start from / so no process looks for a directory gone.
	cmd.Dir = "/"
	return cmd
}

// TestMain fails the package when the cases changed the mode or owner of
// the machine's /, /tmp, /var/tmp or /run (run.py once copied a case
// tree's modes onto / and /tmp).
func TestMain(m *testing.M) { os.Exit(testhosts.GuardSystemDirs(m.Run)) }
