package jinja

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// FuzzRender feeds random templates to Render: it must return an output
// or an *Error, never panic or hang past its context.
func FuzzRender(f *testing.F) {
	data, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		f.Fatal(err)
	}
	var cases []conformanceCase
	if err := json.Unmarshal(data, &cases); err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		f.Add(c.Template)
	}
	files := map[string]string{
		"m.jinja":  "{% macro m(a, b=1) %}{{ a }}{{ b }}{{ caller() if caller is defined }}{% endmacro %}{% set v = [1, {'a': 2}] %}",
		"d.yaml":   "a: 1\nb: [x, y]\n",
		"d.json":   `{"a": [1, 2]}`,
		"self.sls": "{% include 'self.sls' %}",
	}
	vars := map[string]any{
		"grains": map[string]any{"os": "Debian", "ipv4": []any{"10.0.0.1"}},
		"pillar": map[string]any{"users": map[string]any{"a": map[string]any{"uid": 1}}, "pkgs": []any{"x", "y"}},
		"tpldir": "d",
	}
	f.Fuzz(func(t *testing.T, src string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, allow := range []bool{false, true} {
			_, err := Render(ctx, src, Options{
				Name:           "fuzz.sls",
				Vars:           vars,
				Salt:           newFakeSalt(),
				Loader:         mapLoader(files),
				AllowUndefined: allow,
				TrimBlocks:     allow,
				LstripBlocks:   allow,
			})
			if err != nil && ctx.Err() == nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("Render(%q) error %T %v, want *Error", src, err, err)
				}
			}
		}
	})
}
