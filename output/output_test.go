package output

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/google/go-cmp/cmp"
)

func m(kv ...any) *ordered.Map { return ordered.FromPairs(kv...) }

// A salt-ssh style return for one host.
var sshRet = m("web1", m(
	"retcode", 0,
	"stdout", "hello\nworld",
	"ok", true,
	"pkgs", []any{"vim", m("name", "git", "ver", 2.5), []any{1, nil}},
	"empty", m(),
	"none", nil,
	"blank", "",
))

func TestFormat(t *testing.T) {
	tests := []struct {
		name, out string
		data      any
		opts      Options
		want      string
	}{
		{"nested", "nested", sshRet, Options{}, `web1:
    ----------
    blank:
    empty:
        ----------
    none:
        None
    ok:
        True
    pkgs:
        - vim
        |_
          ----------
          name:
              git
          ver:
              2.5
        |_
          - 1
          - None
    retcode:
        0
    stdout:
        hello
        world`},
		{"nested color", "nested", m("web1", m("ret", true, "out", "a\x1bb", "l", []any{1})), Options{Color: true},
			"\x1b[0;36mweb1\x1b[0;0m:\n" +
				"    \x1b[0;36m----------\x1b[0;0m\n" +
				"    \x1b[0;36ml\x1b[0;0m:\n" +
				"        \x1b[0;1;33m- 1\x1b[0;0m\n" +
				"    \x1b[0;36mout\x1b[0;0m:\n" +
				"        \x1b[0;32ma?b\x1b[0;0m\n" +
				"    \x1b[0;36mret\x1b[0;0m:\n" +
				"        \x1b[0;1;33mTrue\x1b[0;0m"},
		{"nested failed retcode is red", "nested", m("h", []any{m("a", 1)}), Options{Color: true, Retcode: 1},
			"\x1b[0;31mh\x1b[0;0m:\n" +
				"    \x1b[0;31m|_\x1b[0;0m\n" +
				"      \x1b[0;31m----------\x1b[0;0m\n" +
				"      \x1b[0;31ma\x1b[0;0m:\n" +
				"          \x1b[0;1;33m1\x1b[0;0m"},
		{"nested list prefix on continuation lines", "nested", []any{"a\nb"}, Options{}, "- a\n  b"},
		{"nested keeps escapes when asked", "nested", "\x1b[1m", Options{KeepEscapes: true}, "\x1b[1m"},
		{"json default indent 4, order kept", "json", m("b", 1, "a", []any{true, nil, 1.0, "é\n"}), Options{},
			"{\n    \"b\": 1,\n    \"a\": [\n        true,\n        null,\n        1.0,\n        \"é\\n\"\n    ]\n}"},
		{"json pretty sorts", "json", m("b", 1, "a", m()), Options{IndentPretty: true}, "{\n    \"a\": {},\n    \"b\": 1\n}"},
		{"json one line", "json", m("b", 1, "a", []any{}), Options{Indent: IndentOf(-1)}, `{"b": 1, "a": []}`},
		{"json odd keys", "json", m(2, "x", true, "y", nil, "z"), Options{Indent: IndentOf(-1)}, `{"2": "x", "true": "y", "null": "z"}`},
		{"yaml block", "yaml", sshRet, Options{}, `web1:
  blank: ''
  empty: {}
  none: null
  ok: true
  pkgs:
  - vim
  - name: git
    ver: 2.5
  - - 1
    - null
  retcode: 0
  stdout: 'hello

    world'`},
		{"yaml flow", "yaml", m("a", []any{1, "x"}), Options{Indent: IndentOf(-1)}, "{a: [1, x]}"},
		{"yaml scalar root", "yaml", "ok", Options{}, "ok\n..."},
		{"raw", "raw", sshRet, Options{}, `{'web1': {'retcode': 0, 'stdout': 'hello\nworld', 'ok': True, 'pkgs': ['vim', {'name': 'git', 'ver': 2.5}, [1, None]], 'empty': {}, 'none': None, 'blank': ''}}`},
		{"raw string is itself", "raw", "it's", Options{}, "it's"},
		{"txt", "text", m("web1", "a\nb", "db", m("x", 1), "n", nil), Options{}, "web1: a\nweb1: b\ndb: {'x': 1}\nn: None"},
		{"pprint", "pprint", m("b", 1, "a", "x"), Options{}, "{'a': 'x', 'b': 1}"},
		{"quiet", "quiet", sshRet, Options{}, ""},
		{"no_return", "no_return", m("web1", "Minion did not return"), Options{}, "web1:\n    Minion did not return"},
		{"unknown falls back to nested", "bogus", m("a", 1), Options{}, "a:\n    1"},
		{"empty name is nested", "", m("a", 1), Options{}, "a:\n    1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Format(tc.out, tc.data, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.Split(tc.want, "\n"), strings.Split(got, "\n")); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.out, diff)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	var buf bytes.Buffer
	var logs bytes.Buffer
	opts := Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := Write(&buf, "yaml", m("a", 1), opts); err != nil {
		t.Fatal(err)
	}
	if err := Write(&buf, "quiet", m("a", 1), opts); err != nil {
		t.Fatal(err)
	}
	if err := Write(&buf, "nested", m("a", "x  \n\n"), opts); err != nil {
		t.Fatal(err)
	}
	if err := Write(&buf, "nope", 1, opts); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "a: 1\na:\n    x\n1\n"; got != want {
		t.Errorf("Write output = %q, want %q", got, want)
	}
	if !strings.Contains(logs.String(), "outputter=nope") {
		t.Errorf("no fallback warning logged: %q", logs.String())
	}
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	r.Register("highstate", func(data any, _ Options) (string, error) { return "hs", nil })
	r.Register("nested", func(any, Options) (string, error) { return "", errors.New("boom") })
	defer func() {
		if recover() == nil {
			t.Error("duplicate Register did not panic")
		}
	}()
	if s, err := r.Format("highstate", nil, Options{}); err != nil || s != "hs" {
		t.Errorf("Format(highstate) = %q, %v", s, err)
	}
	if _, err := r.Format("nested", nil, Options{}); err == nil || !strings.Contains(err.Error(), "format nested: boom") {
		t.Errorf("Format error = %v", err)
	}
	if diff := cmp.Diff([]string{"highstate", "nested"}, r.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	for _, n := range []string{"nested", "json", "yaml", "raw", "txt", "pprint", "quiet", "no_return"} {
		if _, ok := Lookup(n); !ok {
			t.Errorf("global outputter %q missing", n)
		}
	}
	r.Register("highstate", nil)
}
