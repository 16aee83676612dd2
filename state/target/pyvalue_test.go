package target

import (
	"math"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/google/go-cmp/cmp"
)

// Expectations from PyYAML 6's safe_load and salt/utils/args.py
// yamlify_arg.
func TestYamlifyKey(t *testing.T) {
	tests := []struct {
		in      string
		want    any
		changed bool
	}{
		{"1", 1, true},
		{"+1", 1, true},
		{"-1", -1, true},
		{"0x1F", 31, true},
		{"017", 15, true},
		{"0b101", 5, true},
		{"1_0", nil, false}, // yamlify_arg keeps digit-and-underscore strings
		{"+1_0", 10, true},
		{"1:30", 90, true},
		{"1.5", 1.5, true},
		{"1.", 1.0, true},
		{".5", 0.5, true},
		{"1e3", nil, false},
		{"1.5e+3", 1500.0, true},
		{".inf", math.Inf(1), true},
		{"yes", true, true},
		{"No", false, true},
		{"ON", true, true},
		{"y", nil, false},
		{"null", nil, true},
		{"~", nil, true},
		{"None", nil, true},
		{"'1'", "1", true},
		{`"x"`, "x", true},
		{"abc", nil, false},
		{"1 #c", 1, true},
		{"a #c", nil, false},
		{"08", nil, false},
		{"2001-01-01", nil, false},
		{"", nil, false},
		{"[1]", nil, false},
	}
	for _, tt := range tests {
		got, changed := yamlifyKey(tt.in)
		if changed != tt.changed || (changed && !cmp.Equal(got, tt.want)) {
			t.Errorf("yamlifyKey(%q) = %#v, %v; want %#v, %v", tt.in, got, changed, tt.want, tt.changed)
		}
	}
}

func TestPyInt(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"-2", -2, true}, {" 3 ", 3, true}, {"1_0", 10, true},
		{"_1", 0, false}, {"1__0", 0, false}, {"1.0", 0, false}, {"", 0, false}, {"٣", 3, true},
	}
	for _, tt := range tests {
		got, ok := pyInt(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("pyInt(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPyLookupNumericKeys(t *testing.T) {
	m := ordered.FromPairs(1, "int", 2.0, "float", true, "bool")
	for _, k := range []any{1, 1.0, true} {
		if _, ok := pyLookup(m, k); !ok {
			t.Errorf("pyLookup(%v) not found", k)
		}
	}
	if v, _ := pyLookup(m, 2); v != "float" {
		t.Errorf("pyLookup(2) = %v, want the 2.0 entry", v)
	}
}
