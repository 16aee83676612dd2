package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stream is a `go test -json` run: a pass, a failure, a listed skip, an
// unlisted skip, a package whose TestMain failed and one that did not build.
const stream = `{"Action":"start","Package":"ex/a"}
{"Action":"run","Package":"ex/a","Test":"TestOK"}
{"Action":"output","Package":"ex/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"ex/a","Test":"TestOK"}
{"Action":"run","Package":"ex/a","Test":"TestBad"}
{"Action":"output","Package":"ex/a","Test":"TestBad","Output":"    a_test.go:9: boom\n"}
{"Action":"fail","Package":"ex/a","Test":"TestBad"}
{"Action":"run","Package":"ex/a","Test":"TestHelper"}
{"Action":"output","Package":"ex/a","Test":"TestHelper","Output":"    a_test.go:12: helper process only\n"}
{"Action":"output","Package":"ex/a","Test":"TestHelper","Output":"--- SKIP: TestHelper (0.00s)\n"}
{"Action":"skip","Package":"ex/a","Test":"TestHelper"}
{"Action":"run","Package":"ex/a","Test":"TestE2E/sub"}
{"Action":"output","Package":"ex/a","Test":"TestE2E/sub","Output":"    x.go:40: testhosts: NOT RUN: needs root\n"}
{"Action":"skip","Package":"ex/a","Test":"TestE2E/sub"}
{"Action":"output","Package":"ex/a","Output":"FAIL\tex/a\t0.01s\n"}
{"Action":"fail","Package":"ex/a"}
{"Action":"output","Package":"ex/b","Output":"FAIL: the tests changed /tmp from dtrwxrwxrwx 0:0 to drwxr-xr-x 0:0\n"}
{"Action":"output","Package":"ex/b","Output":"FAIL\tex/b\t0.01s\n"}
{"Action":"fail","Package":"ex/b"}
{"ImportPath":"ex/c [ex/c.test]","Action":"build-output","Output":"c.go:1:1: expected 'package'\n"}
{"ImportPath":"ex/c [ex/c.test]","Action":"build-fail"}
{"Action":"output","Package":"ex/c","Output":"FAIL\tex/c [build failed]\n"}
{"Action":"fail","Package":"ex/c","FailedBuild":"ex/c [ex/c.test]"}
{"Action":"skip","Package":"ex/d"}
`

func TestSummary(t *testing.T) {
	allow := filepath.Join(t.TempDir(), "allow")
	if err := os.WriteFile(allow, []byte("# comment\nex/a TestHelper the child of another test\nex/a TestGone it used to skip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"-allow", allow}, strings.NewReader(stream), &out, &errb)
	got := out.String()
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "1 passed, 3 failed, 2 skipped" {
		t.Errorf("last line %q\n%s", last, got)
	}
	for _, want := range []string{
		"FAIL\tex/a\t0.01s\n",
		"--- FAIL: ex/a TestBad\n    a_test.go:9: boom\n",
		"--- FAIL: package ex/b\n", "changed /tmp",
		"--- FAIL: package ex/c\nc.go:1:1: expected 'package'",
		"SKIP ex/a TestHelper: helper process only\n     allowed: the child of another test",
		"SKIP ex/a TestE2E/sub: testhosts: NOT RUN: needs root\n     NOT ON THE SKIP LIST",
		"note: skip list entry ex/a TestGone did not skip",
		"1 skips are not on the skip list",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestSummaryClean(t *testing.T) {
	var out, errb bytes.Buffer
	in := `{"Action":"pass","Package":"ex/a","Test":"TestOK"}` + "\n" + `{"Action":"output","Package":"ex/a","Output":"ok  \tex/a\t0.01s\n"}` + "\n"
	if code := run(nil, strings.NewReader(in), &out, &errb); code != 0 || !strings.HasSuffix(out.String(), "ok  \tex/a\t0.01s\n1 passed, 0 failed, 0 skipped\n") {
		t.Errorf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}

func TestAllowListErrors(t *testing.T) {
	for _, text := range []string{"ex/a TestX\n", "ex/a TestX why\nex/a TestX why again\n"} {
		if _, err := parseAllowList("skips", text); err == nil || !strings.Contains(err.Error(), "skips:") {
			t.Errorf("%q: %v, want an error naming the file and line", text, err)
		}
	}
}

// TestCheckedInList: the repository's skip list parses, and never excuses
// a missing tool that scripts/install-deps.sh is meant to install.
func TestCheckedInList(t *testing.T) {
	b, err := os.ReadFile("allowed_skips.txt")
	if err != nil {
		t.Fatal(err)
	}
	a, err := parseAllowList("allowed_skips.txt", string(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range a {
		if strings.Contains(e.key.test, "Pyzmq") || strings.Contains(strings.ToLower(e.why), "not installed") {
			t.Errorf("%s: a missing tool is never a justified skip", e.key)
		}
	}
}
