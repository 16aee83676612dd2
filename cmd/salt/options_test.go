package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// TestOutputFlags pins the output options salt/utils/parsers.py gives the
// salt CLI, with their aliases, parsed after the target as Salt users
// write them.
func TestOutputFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want options
	}{
		{[]string{"*", "test.ping", "-s", "--out-file", "/tmp/x", "--out-file-append"},
			options{static: true, outFile: "/tmp/x", outAppend: true}},
		{[]string{"--output-file=/tmp/y", "*", "test.ping", "--output-file-append", "--static"},
			options{static: true, outFile: "/tmp/y", outAppend: true}},
		{[]string{"*", "state.apply", "--state-output", "terse", "--state-verbose", "False"},
			options{stateOut: "terse", stateVerbose: "False"}},
		{[]string{"*", "state.apply", "--state_output=mixed", "--state_verbose=true"},
			options{stateOut: "mixed", stateVerbose: "true"}},
		{[]string{"*", "test.ping", "--hide-timeout", "--failhard", "--summary", "-b", "2"},
			options{hideTimeout: true, failhard: true, summary: true, batch: "2"}},
		{[]string{"*", "test.ping", "--output-indent", "2", "--output-diff"}, options{outIndent: 2, outputDiff: true}},
	} {
		var o options
		fs := newFlagSet(&o, io.Discard)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		got := options{static: o.static, outFile: o.outFile, outAppend: o.outAppend, stateOut: o.stateOut,
			stateVerbose: o.stateVerbose, hideTimeout: o.hideTimeout, failhard: o.failhard, summary: o.summary,
			batch: o.batch, outputDiff: o.outputDiff}
		if o.outIndent != -1000 {
			got.outIndent = o.outIndent
		}
		if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(options{})); d != "" {
			t.Errorf("%v (-want +got):\n%s", tc.args, d)
		}
	}
}

// TestOutputter is salt/output/__init__.py get_printout as the salt CLI
// calls it: per return with the return's "out", and once with "" for
// --static.
func TestOutputter(t *testing.T) {
	for _, tc := range []struct {
		name      string
		flag, cfg string
		static    bool
		fun, out  string
		want      string
	}{
		{"return's own", "", "", false, "state.apply", "highstate", "highstate"},
		{"--out wins", "json", "", false, "state.apply", "highstate", "json"},
		{"config output wins", "", "yaml", false, "test.ping", "nested", "yaml"},
		{"--out over config", "txt", "yaml", false, "test.ping", "", "txt"},
		{"--out highstate does not", "highstate", "", false, "test.ping", "nested", "nested"},
		{"static state", "", "", true, "state.apply", "", "highstate"},
		{"static other", "", "", true, "test.ping", "", ""},
		{"static --out", "json", "", true, "state.apply", "", "json"},
		{"static --out highstate", "highstate", "", true, "test.ping", "", "highstate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &cli{o: options{out: tc.flag, static: tc.static}, fun: tc.fun, cfg: ordered.New()}
			if tc.cfg != "" {
				c.cfg.Set("output", tc.cfg)
			}
			if got := c.outputter(tc.out); got != tc.want {
				t.Errorf("outputter(%q) = %q, want %q", tc.out, got, tc.want)
			}
		})
	}
}

func TestFinishStatic(t *testing.T) {
	var out, errb bytes.Buffer
	c := &cli{o: options{out: "json", static: true, outIndent: -1000}, fun: "test.retcode", cfg: ordered.New(),
		stdout: &out, outW: &out, stderr: &errb}
	all := ordered.FromPairs("m2", true, "m1", ordered.New())
	if code := c.finishStatic(all); code != 0 {
		t.Errorf("exit %d, want 0: Salt's --static ignores retcodes", code)
	}
	if want := "{\n    \"m2\": true,\n    \"m1\": {}\n}\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	if code := c.finishStatic(ordered.New()); code != 2 || out.String() != "{}\n" || errb.String() != "ERROR: No return received\n" {
		t.Errorf("no returns: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

func TestFinish(t *testing.T) {
	for _, tc := range []struct {
		name          string
		o             options
		got           map[string]int
		code          int
		shown, hidden string
	}{
		{"all fine", options{}, map[string]int{"a": 0, "b": 0}, 0, "", "b:"},
		{"silent minion", options{}, map[string]int{"a": 0}, 1, "b:\n    Minion did not return. [No response]", ""},
		{"hide-timeout", options{hideTimeout: true}, map[string]int{"a": 0}, 0, "", "b:"},
		{"hide-timeout -v", options{hideTimeout: true, verbose: true}, map[string]int{"a": 0}, 1, "b:\n    Minion did not return", ""},
		{"failed", options{hideTimeout: true}, map[string]int{"a": 2}, 1, "", "b:"},
		{"summary", options{summary: true, verbose: true}, map[string]int{"a": 2}, 1,
			"# of minions targeted: 2\n# of minions returned: 1\n# of minions that did not return: 1\n# of minions with errors: 1\nMinions not responding: b\nMinions with failures: a\n", ""},
		{"summary with --out", options{summary: true, out: "nested"}, map[string]int{"a": 0, "b": 0}, 0, "", "Summary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			tc.o.outIndent = -1000
			c := &cli{o: tc.o, cfg: ordered.New(), stdout: &out, outW: &out, stderr: &errb}
			code := c.finish("20260101000000000000", []string{"a", "b"}, tc.got)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if tc.shown != "" && !bytes.Contains(out.Bytes(), []byte(tc.shown)) {
				t.Errorf("want %q in\n%s", tc.shown, out.String())
			}
			if tc.hidden != "" && bytes.Contains(out.Bytes(), []byte(tc.hidden)) {
				t.Errorf("%q should not be in\n%s", tc.hidden, out.String())
			}
			if (code != 0) != (errb.String() == "ERROR: Minions returned with non-zero exit code\n") {
				t.Errorf("stderr %q with exit %d", errb.String(), code)
			}
		})
	}
}

// TestBatchTimedOut: salt/cli/batch.py shows a minion whose job never
// returned as an empty return with retcode 0; --static keeps it as {}.
func TestBatchTimedOut(t *testing.T) {
	for _, static := range []bool{false, true} {
		var out bytes.Buffer
		c := &cli{o: options{outIndent: -1000}, cfg: ordered.New(), stdout: &out, outW: &out, stderr: io.Discard}
		var all *ordered.Map
		if static {
			all = ordered.New()
		}
		b := c.newBatch(nil, master.PublishRequest{}, all)
		for _, id := range []string{"m1", "m2"} {
			b.OnTimeout(id)
		}
		want := "m1:\n    ----------\nm2:\n    ----------\n"
		if static {
			want = ""
			if d := cmp.Diff([]any{"m1", "m2"}, all.Keys()); d != "" || all.Value("m1").(*ordered.Map).Len() != 0 {
				t.Errorf("static returns: %s", d)
			}
		}
		if out.String() != want {
			t.Errorf("static %v: printed %q, want %q", static, out.String(), want)
		}
	}
}

// TestTargetOptionsExclusive: two target options are Salt's usage error
// (exit 2) before anything is read or published.
func TestTargetOptionsExclusive(t *testing.T) {
	var stderr bytes.Buffer
	code := run(t.Context(), []string{"-E", "-G", "os:Debian", "test.ping", "-c", t.TempDir()}, strings.NewReader(""), io.Discard, &stderr)
	want := "salt: error: The options --pcre/--grain are mutually exclusive. Please only choose one of them\n"
	if code != 2 || stderr.String() != want {
		t.Fatalf("exit %d, stderr %q; want 2, %q", code, stderr.String(), want)
	}
}
