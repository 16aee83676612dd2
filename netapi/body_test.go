package netapi

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// repr renders a value as Python would, for comparisons.
func repr(v any) string { return py.Repr(v) }

func TestParseBody(t *testing.T) {
	for _, tc := range []struct {
		name, ct, body string
		want           string // repr of the data
		code           int    // HTTPError code, 0 for none
	}{
		{"json list", "application/json", `[{"client": "local", "tgt": "*", "fun": "test.ping"}]`,
			`[{'client': 'local', 'tgt': '*', 'fun': 'test.ping'}]`, 0},
		{"json with charset", "application/json; charset=utf-8", `{"a": 1.5}`, `{'a': 1.5}`, 0},
		{"bad json", "application/json", `{"a": `, "", 400},
		{"json trailing garbage", "application/json", `{} {}`, "", 400},
		{"yaml", "application/x-yaml", "- client: local\n  tgt: '*'\n  arg: [1, 'two']\n",
			`[{'client': 'local', 'tgt': '*', 'arg': [1, 'two']}]`, 0},
		{"text/yaml", "text/yaml", "fun: test.ping\n", `{'fun': 'test.ping'}`, 0},
		{"bad yaml", "application/x-yaml", "a: [1,\n", "", 400},
		{"text/plain json", "text/plain;charset=UTF-8", `[{"fun": "test.ping"}]`, `[{'fun': 'test.ping'}]`, 0},
		{"text/plain text", "text/plain", `hello`, `'hello'`, 0},
		{"form", "application/x-www-form-urlencoded", "client=local&tgt=*&fun=test.arg&arg=1&arg=a%20b&arg={x: 1}&kwarg={y: 2}",
			`{'client': 'local', 'tgt': '*', 'fun': 'test.arg', 'arg': [1, 'a b', {'x': 1}], 'kwarg': {'y': 2}}`, 0},
		{"form single arg", "", "fun=cmd.run&arg=uptime&blank=&noeq", `{'fun': 'cmd.run', 'arg': ['uptime']}`, 0},
		{"form arg kept as string", "application/x-www-form-urlencoded", "arg=a:b&arg=1_000&arg=%zz",
			`{'arg': ['a:b', '1_000', '%zz']}`, 0},
		{"unknown type", "application/xml", "<a/>", "", 406},
		{"empty", "application/json", "", "None", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseBody(tc.ct, []byte(tc.body))
			var he *HTTPError
			if tc.code != 0 {
				if !errors.As(err, &he) || he.Code != tc.code {
					t.Fatalf("err %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := repr(b.Data); got != tc.want {
				t.Errorf("data %s, want %s", got, tc.want)
			}
			if b.Raw != tc.body {
				t.Errorf("raw %q, want %q", b.Raw, tc.body)
			}
		})
	}
}

func TestLowstate(t *testing.T) {
	one := ordered.FromPairs("fun", "test.ping", "arg", "x")
	got, err := Lowstate(one)
	if err != nil || len(got) != 1 || got[0] != one {
		t.Fatalf("a mapping is a one-chunk lowstate: %v %v", got, err)
	}
	for _, bad := range []any{nil, "text", 3, ordered.New()} {
		_, err := Lowstate(bad)
		var he *HTTPError
		if !errors.As(err, &he) || he.Code != 400 || he.Message != "Lowstates must be a list" {
			t.Errorf("Lowstate(%v): %v", repr(bad), err)
		}
	}
	if _, err := Lowstate([]any{"x"}); !errors.Is(err, errNotAMapping) {
		t.Errorf("a chunk that is not a mapping: %v", err)
	}
}

func TestPrepareChunk(t *testing.T) {
	c := ordered.FromPairs("fun", "test.arg", "arg", "one", "token", "zz")
	if err := prepareChunk(c, "", ""); err == nil || err.(*HTTPError).Message != "Invalid token" {
		t.Errorf("a token that is not hex: %v", err)
	}
	c = ordered.FromPairs("fun", "test.arg", "arg", "one", "token", "zz")
	if err := prepareChunk(c, "abc123", "local_async"); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(`{'fun': 'test.arg', 'arg': ['one'], 'token': 'abc123', 'client': 'local_async'}`, repr(c)); d != "" {
		t.Errorf("chunk (-want +got):\n%s", d)
	}
}

func TestIsPyHex(t *testing.T) {
	for s, want := range map[string]bool{"abc123": true, " 0xFF ": true, "-1f": true, "0x_1": true, "1_2": true,
		"": false, "0x": false, "_1": false, "1_": false, "1__2": false, "g": false, "12 34": false} {
		if got := isPyHex(s); got != want {
			t.Errorf("isPyHex(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestConditionInput(t *testing.T) {
	got := conditionInput([]any{"a"}, ordered.FromPairs("k", 1))
	if r := repr(got); r != "['a', {'__kwarg__': True, 'k': 1}]" {
		t.Errorf("got %s", r)
	}
	if r := repr(conditionInput(nil, ordered.New())); r != "[]" {
		t.Errorf("empty kwarg: %s", r)
	}
}

func TestSortedPermissions(t *testing.T) {
	got := sortedPermissions([]any{"test.*", "@wheel", "test.*", ordered.FromPairs("web*", []any{"x"}), "a.b"})
	if r := repr(got); r != "['@wheel', 'a.b', 'test.*', {'web*': ['x']}]" {
		t.Errorf("got %s", r)
	}
}
