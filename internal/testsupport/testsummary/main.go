// Command testsummary reads `go test -json` on stdin and ends `make test`
// with an account of what ran: each package's result line as it finishes,
// the output of every failed test, every skipped test with its reason and
// whether the skip list justifies it, and on its own last line
//
//	N passed, N failed, N skipped
//
// which CI reads. It exits non-zero when a test or package failed or when a
// test skipped that the skip list (-allow, a checked-in file) does not name:
// in `make test` a skip is as bad as a failure unless it is justified.
//
//	go test -json ./... | testsummary -allow internal/testsummary/allowed_skips.txt
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testsummary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	allowPath := fs.String("allow", "", "file of skips that are justified: `IMPORT/PATH TestName/sub  reason`")
	if err := fs.Parse(args); err != nil {
		return 64
	}
	var allow allowList
	if *allowPath != "" {
		b, err := os.ReadFile(*allowPath)
		if err != nil {
			fmt.Fprintf(stderr, "testsummary: %v\n", err)
			return 1
		}
		if allow, err = parseAllowList(*allowPath, string(b)); err != nil {
			fmt.Fprintf(stderr, "testsummary: %v\n", err)
			return 1
		}
	}
	s := newSummary(stdout)
	if err := s.read(stdin); err != nil {
		fmt.Fprintf(stderr, "testsummary: read go test -json: %v\n", err)
		return 1
	}
	return s.report(allow)
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build-output and build-fail events: "pkg [pkg.test]"
	FailedBuild string // a package's fail event: the ImportPath that did not build
}

// testKey names a test in a package.
type testKey struct{ pkg, test string }

func (k testKey) String() string { return k.pkg + " " + k.test }

// summary accumulates the run.
type summary struct {
	out      io.Writer
	output   map[testKey][]string // each test's output lines so far
	result   map[testKey]string   // pass, fail, skip
	order    []testKey            // in the order results came
	pkgFail  map[string]bool      // packages that failed
	pkgOut   map[string][]string  // package-level output (TestMain, panics)
	build    map[string][]string  // build errors by import path
	buildOf  map[string]string    // package -> the import path that failed to build
	failedIn map[string]bool      // packages with a failed test
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, output: map[testKey][]string{}, result: map[testKey]string{},
		pkgFail: map[string]bool{}, pkgOut: map[string][]string{}, build: map[string][]string{},
		buildOf: map[string]string{}, failedIn: map[string]bool{}}
}

// read consumes the event stream, printing each package's result line
// ("ok  pkg 1.2s", "FAIL pkg") as it arrives. Lines that are not JSON (go
// vet's or the go command's own messages) are printed as they are.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(s.out, string(line))
			continue
		}
		s.add(e)
	}
	return sc.Err()
}

func (s *summary) add(e event) {
	switch e.Action {
	case "build-output":
		s.build[e.ImportPath] = append(s.build[e.ImportPath], e.Output)
		return
	case "build-fail":
		return
	}
	if e.Test == "" {
		s.addPackage(e)
		return
	}
	k := testKey{e.Package, e.Test}
	switch e.Action {
	case "output":
		s.output[k] = append(s.output[k], e.Output)
	case "pass", "fail", "skip":
		if _, seen := s.result[k]; !seen {
			s.order = append(s.order, k)
		}
		s.result[k] = e.Action
		if e.Action == "fail" {
			s.failedIn[e.Package] = true
		}
	}
}

func (s *summary) addPackage(e event) {
	switch e.Action {
	case "output":
		s.pkgOut[e.Package] = append(s.pkgOut[e.Package], e.Output)
		if isResultLine(e.Output) {
			fmt.Fprint(s.out, e.Output)
		}
	case "fail":
		s.pkgFail[e.Package] = true
		if e.FailedBuild != "" {
			s.buildOf[e.Package] = e.FailedBuild
		}
	}
}

// isResultLine reports whether a package-level output line is go test's
// verdict on the package.
func isResultLine(l string) bool {
	for _, p := range []string{"ok  \t", "FAIL\t", "?   \t"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// skipReason returns what a skipped test printed: its log lines (the
// t.Skip message last), without go test's own === and --- lines and the
// file:line prefixes.
func skipReason(lines []string) string {
	var msgs []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "!!! ") {
			continue
		}
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") {
			t = t[i+2:]
		}
		msgs = append(msgs, t)
	}
	if len(msgs) == 0 {
		return "(no reason given)"
	}
	return msgs[len(msgs)-1]
}

// report prints failures, skips and the closing line, and returns the exit
// code.
func (s *summary) report(allow allowList) int {
	var passed, failed, skipped int
	var bad []string
	for _, k := range s.order {
		switch s.result[k] {
		case "pass":
			passed++
		case "fail":
			failed++
			fmt.Fprintf(s.out, "\n--- FAIL: %s\n%s", k, strings.Join(s.output[k], ""))
		}
	}
	pkgs := make([]string, 0, len(s.pkgFail))
	for p := range s.pkgFail {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		if s.failedIn[p] {
			continue
		}
		// A package that failed with no failed test: it did not build, or
		// TestMain or a panic failed it.
		failed++
		out := strings.Join(s.build[s.buildOf[p]], "") + strings.Join(s.pkgOut[p], "")
		fmt.Fprintf(s.out, "\n--- FAIL: package %s\n%s", p, out)
	}
	var skips []string
	for _, k := range s.order {
		if s.result[k] != "skip" {
			continue
		}
		skipped++
		reason := skipReason(s.output[k])
		if why, ok := allow.justifies(k); ok {
			skips = append(skips, fmt.Sprintf("SKIP %s: %s\n     allowed: %s", k, reason, why))
			continue
		}
		skips = append(skips, fmt.Sprintf("SKIP %s: %s\n     NOT ON THE SKIP LIST", k, reason))
		bad = append(bad, k.String())
	}
	if len(skips) > 0 {
		fmt.Fprintf(s.out, "\n%d skipped:\n%s\n", skipped, strings.Join(skips, "\n"))
	}
	for _, e := range allow.unused() {
		fmt.Fprintf(s.out, "note: skip list entry %s did not skip in this run\n", e)
	}
	if len(bad) > 0 {
		fmt.Fprintf(s.out, "\n%d skips are not on the skip list (justify them there, or make them run): %s\n",
			len(bad), strings.Join(bad, ", "))
	}
	fmt.Fprintf(s.out, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 || len(bad) > 0 {
		return 1
	}
	return 0
}
