package minion

import (
	"testing"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
)

func TestParseEngines(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"[reactor]", "[['reactor', 'reactor', None]]"},
		{"[{reactor: {worker_threads: 2}}, other]", "[['reactor', 'reactor', {'worker_threads': 2}], ['other', 'other', None]]"},
		{"{mine: {engine_module: reactor, worker_hwm: 5}}", "[['mine', 'reactor', {'worker_hwm': 5}]]"},
		{"[3, {}, [x]]", "[]"},
		{"reactor", "[]"},
	} {
		v, err := saltyaml.Load([]byte(tc.src), "engines")
		if err != nil {
			t.Fatal(err)
		}
		got := []any{}
		for _, e := range parseEngines(v) {
			var conf any
			if e.conf != nil {
				conf = e.conf
			}
			got = append(got, []any{e.name, e.module, conf})
		}
		if s := py.Repr(got); s != tc.want {
			t.Errorf("parseEngines(%s) = %s, want %s", tc.src, s, tc.want)
		}
	}
}

// FuzzParseEngines feeds YAML as the engines option: it parses to
// engines or none, never a panic.
func FuzzParseEngines(f *testing.F) {
	for _, s := range []string{"[reactor]", "{a: {engine_module: reactor}}", "- {x: {engine_module: 3}}\n- y\n", "- {a: 1, b: 2}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		v, err := saltyaml.Load([]byte(src), "fuzz")
		if err != nil {
			return
		}
		for _, e := range parseEngines(v) {
			if e.module == "" && e.name != "" {
				t.Errorf("engine %q without a module", e.name)
			}
			_ = e.conf.Len()
		}
	})
}
