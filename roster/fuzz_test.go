package roster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzParseFlat checks that no roster text panics the parser and that a
// failure is always a set of *Error with a file name.
func FuzzParseFlat(f *testing.F) {
	for _, s := range []string{
		"web1: 10.0.0.5\n",
		"db1:\n  host: h\n  port: 2222\n  sudo: yes\n  cmd_umask: 0077\n",
		"a: &x {user: u}\nb:\n  <<: *x\n",
		"- a\n",
		"#!jinja|yaml\nweb: h\n",
		"a:\n  ssh_pre_flight_args: \"x 'y z'\"\n  minion_opts: {a: [1, 2]}\n",
	} {
		f.Add([]byte(s))
	}
	cfg := testConfig()
	f.Fuzz(func(t *testing.T, src []byte) {
		r, err := ParseFlat(context.Background(), src, "roster", cfg)
		if err != nil {
			errs := Errors(err)
			if len(errs) == 0 {
				t.Fatalf("error is not a roster error: %v", err)
			}
			for _, e := range errs {
				if e.File != "roster" && e.File != "" {
					t.Fatalf("error without the file: %v", e)
				}
			}
			return
		}
		ts, err := r.Targets(context.Background(), "*", "glob")
		if err != nil {
			if !errors.Is(err, ErrUnsupportedTargetType) {
				t.Fatalf("Targets: %v", err)
			}
			return
		}
		for _, tg := range ts {
			if tg.Host == "" || tg.Port < 1 || tg.Port > 65535 {
				t.Fatalf("bad target %+v", tg)
			}
		}
	})
}

// TestAliasBombs checks that exponential alias expansion neither hangs
// nor exhausts memory (it is refused with its line, see
// saltyaml.MaxExpanded), and that merge and recursion bombs fail as
// Salt's loader fails.
func TestAliasBombs(t *testing.T) {
	merge := "a0: &a0 {x: 1}\n"
	laughs := "a0: &a0 [x, x]\n"
	for i := 1; i < 40; i++ {
		merge += fmt.Sprintf("a%d: &a%d {<<: [*a%d, *a%d]}\n", i, i, i-1, i-1)
		laughs += fmt.Sprintf("a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	tests := []struct{ name, src, want string }{
		{"laughs", "l:\n  " + strings.ReplaceAll(laughs, "\n", "\n  ") + "\nweb:\n  grains: {x: *a39}\n", "alias bomb"},
		{"merge", merge, "conflicting ID 'x'"},
		{"recursive", "a: &x {host: h, grains: {self: *x}}\n", "recursive alias"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFlat(context.Background(), []byte(tc.src), "roster", testConfig())
			if tc.want == "" {
				if err != nil {
					t.Fatalf("err = %v, want none (l holds unknown keys only)", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
