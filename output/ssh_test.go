package output

import (
	"bytes"
	"testing"

	"github.com/brinesalt/brine/internal/py"
	"github.com/google/go-cmp/cmp"
)

func TestSSHDisplay(t *testing.T) {
	tests := []struct {
		name    string
		ret     any
		wantOut string
		want    any
	}{
		{"return with out", m("return", m("a", 1), "retcode", 0, "out", "json"), "json", m("a", 1)},
		{"return without out", m("return", "x", "retcode", 0), "cur", "x"},
		{"ssh error", m("stderr", "ssh: connect to host h port 22: Connection refused", "retcode", 255), "cur",
			"ssh: connect to host h port 22: Connection refused"},
		{"permission denied", m("_error", "Permission denied", "stderr", "Permission denied (publickey).", "retcode", 255), "cur",
			"Permission denied (publickey)."},
		{"other dict", m("stdout", "o", "stderr", "e", "retcode", 1), "cur", m("stdout", "o", "stderr", "e", "retcode", 1)},
		{"string", "Target 'h' did not return any data, probably due to an error.", "cur",
			"Target 'h' did not return any data, probably due to an error."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, doc := SSHDisplay("h", tc.ret, "cur")
			if out != tc.wantOut {
				t.Errorf("outputter = %q, want %q", out, tc.wantOut)
			}
			if diff := cmp.Diff(py.Repr(m("h", tc.want)), py.Repr(doc)); diff != "" {
				t.Errorf("doc (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrinter(t *testing.T) {
	var buf bytes.Buffer
	p := &Printer{W: &buf}
	_ = p.Host("a", m("return", true, "retcode", 0))
	_ = p.Host("b", m("return", m("k", "v"), "retcode", 0, "out", "txt"))
	_ = p.Host("c", m("return", 1, "retcode", 0)) // txt sticks, as in SSH.run
	if got, want := buf.String(), "a:\n    True\nb: {'k': 'v'}\nc: 1\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}

	buf.Reset()
	p = &Printer{W: &buf, Out: "json", Static: true, Opts: Options{Indent: IndentOf(-1)}}
	_ = p.Host("a", m("return", true, "retcode", 0, "out", "highstate"))
	_ = p.Host("b", "down")
	if buf.Len() != 0 {
		t.Fatalf("static printer wrote before Flush: %q", buf.String())
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "{\"a\": true, \"b\": \"down\"}\n"; got != want {
		t.Errorf("static printed %q, want %q", got, want)
	}
}
