package target

import (
	"errors"
	"strings"
	"testing"
)

func TestSubdictMatchers(t *testing.T) {
	tests := []struct {
		name  string
		kind  Kind
		expr  string
		delim string
		want  bool
	}{
		{"glob value", Grain, "os:Debian", "", true},
		{"values and patterns are lowercased", Grain, "os:DEBIAN", "", true},
		{"glob star", Grain, "os:Deb*", "", true},
		{"no match", Grain, "os:Ubuntu", "", false},
		{"int compared as str", Grain, "osmajorrelease:12", "", true},
		{"bool compared as lowercased str", Grain, "is_vm:False", "", true},
		{"bool is not 0", Grain, "is_vm:0", "", false},
		{"list: any element", Grain, "roles:cache", "", true},
		{"list: no element", Grain, "roles:db", "", false},
		{"nested key", Grain, "env:name:prod", "", true},
		{"nested int", Grain, "env:tier:1", "", true},
		{"nested list", Grain, "env:tags:b", "", true},
		{"dict value: key present", Grain, "env:name", "", true},
		{"dict value: star", Grain, "env:*", "", true},
		{"empty dict never matches", Grain, "empty:*", "", false},
		{"value holding the delimiter", Grain, "path:a:b", "", true},
		{"key into dict inside list", Grain, "mixed:k:v", "", true},
		{"list index", Grain, "mixed:0:plain", "", true},
		{"negative list index", Grain, "mixed:-1:3", "", true},
		{"list element as str", Grain, "mixed:3", "", true},
		{"dict in list is not its key's value", Grain, "mixed:0", "", false},
		{"yamlified int key", Grain, "ints:1:one", "", true},
		{"str key", Grain, "ints:2:two", "", true},
		{"key membership is by str only", Grain, "ints:1", "", false},
		{"key membership str", Grain, "ints:2", "", true},
		{"top wildcard on values", Grain, "*:Debian", "", true},
		{"top wildcard does not reach nested values", Grain, "*:prod", "", false},
		{"top wildcard finds nested keys", Grain, "*:name", "", true},
		{"None as str", Grain, "nothing:None", "", true},
		{"float as str", Grain, "float:1.5", "", true},
		{"nested list glob", Grain, "ip_interfaces:eth0:10.0.0.*", "", true},
		{"value with colons", Grain, "ipv6:fe80::1", "", true},
		{"missing key", Grain, "nonexistent:*", "", false},
		{"empty pattern", Grain, "os:", "", false},
		{"custom delimiter", Grain, "env|name|prod", "|", true},
		{"custom delimiter keeps colons in value", Grain, "ipv6|2001:db8::*", "|", true},
		// _dict_match recurses with ":" whatever the delimiter.
		{"inner split uses colon", Grain, "env|name:prod", "|", true},

		{"pcre anchored at start", GrainPCRE, "os:deb", "", true},
		{"pcre not anchored at end", GrainPCRE, "os:ian", "", false},
		{"pcre list", GrainPCRE, "roles:c.*", "", true},
		{"pcre digits", GrainPCRE, "osmajorrelease:\\d+", "", true},
		{"pcre nested", GrainPCRE, "env:name:pr(od|e)", "", true},
		// subdict_match lowercases the pattern too, so \D becomes \d.
		{"pcre pattern lowercased", GrainPCRE, "os:\\D+", "", false},
		// An invalid regex never matches (Salt logs it), but "*" still
		// matches a dict value without being compiled.
		{"pcre invalid", GrainPCRE, "os:(", "", false},
		{"pcre star on dict", GrainPCRE, "ip_interfaces:*", "", true},

		{"pillar glob", Pillar, "role:web", "", true},
		{"pillar nested glob", Pillar, "app:version:1.2.*", "", true},
		{"pillar list int", Pillar, "app:ports:443", "", true},
		{"pillar is not grains", Pillar, "os:Debian", "", false},
		{"pillar_exact", PillarExact, "app:ports:443", "", true},
		{"pillar_exact lowercases", PillarExact, "role:WEB", "", true},
		{"pillar_exact has no glob", PillarExact, "role:we*", "", false},
		{"pillar_pcre", PillarPCRE, "role:w.b", "", true},
	}
	m := testMinion("web1")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Match(tt.expr, tt.kind, m, Options{Delimiter: tt.delim})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("%s %q = %v, want %v", tt.kind, tt.expr, got, tt.want)
			}
		})
	}
}

func TestSubdictErrors(t *testing.T) {
	tests := []struct {
		kind Kind
		expr string
	}{
		{Grain, "os"},
		{GrainPCRE, "os:(?=d)"},
		{PillarPCRE, "role:a++"},
		{GrainPCRE, "env:name:x(?<=y)"},
	}
	for _, tt := range tests {
		_, err := Compile(tt.expr, tt.kind, Options{})
		var pe *PatternError
		if !errors.As(err, &pe) {
			t.Errorf("Compile(%q, %s) error = %v, want a *PatternError", tt.expr, tt.kind, err)
		}
	}
}

func TestSubdictNilData(t *testing.T) {
	m := &Minion{ID: "x"}
	for _, k := range []Kind{Grain, Pillar, GrainPCRE, PillarExact} {
		if got, _ := Match("*:*", k, m, Options{}); got {
			t.Errorf("%s on a minion without data matched", k)
		}
	}
}

// TestRejectBadRegex: with Options.RejectBadRegex (salt-ssh), a grain or
// pillar PCRE value pattern that no split of the expression makes valid
// is an error naming it, alone or in a compound; without it the target
// compiles and never matches, as in Salt's matchers. A split that leaves
// a valid pattern keeps the target usable.
func TestRejectBadRegex(t *testing.T) {
	strict := Options{RejectBadRegex: true}
	for _, tt := range []struct {
		kind Kind
		expr string
		want string // in the error
	}{
		{GrainPCRE, "os:(", `"("`},
		{PillarPCRE, "x:[", `"["`},
		{Compound, "P@os:(", `"P@os:("`},
		{Compound, "J@x:[", `"J@x:["`},
		{Compound, "web* and P@env:name:(", `"P@env:name:("`},
		{Compound, "G@os:Debian or J@a:b:[", `"J@a:b:["`},
	} {
		_, err := Compile(tt.expr, tt.kind, strict)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "invalid value pattern") {
			t.Errorf("Compile(%q, %s) error = %v, want one naming %s", tt.expr, tt.kind, err, tt.want)
		}
		var pe *PatternError
		if !errors.As(err, &pe) {
			t.Errorf("Compile(%q, %s) error = %v, want a *PatternError inside", tt.expr, tt.kind, err)
		}
		m, err := Compile(tt.expr, tt.kind, Options{})
		if err != nil {
			t.Errorf("Compile(%q, %s) without RejectBadRegex: %v", tt.expr, tt.kind, err)
		} else if tt.kind != Compound && m.Match(testMinion("web1")) {
			t.Errorf("%q matched", tt.expr)
		}
	}
	// "a:b(:c)" splits into key a:b( with value c) (invalid) and key a
	// with value b(:c) (valid): Salt may match through the second.
	for _, expr := range []string{"a:b(:c)", "os:deb"} {
		if _, err := Compile(expr, GrainPCRE, strict); err != nil {
			t.Errorf("Compile(%q) = %v, want no error", expr, err)
		}
	}
}
