package saltyaml

import "testing"

// TestResolveFastPathMatchesResolvers checks resolveImplicit's lookup
// of fixed spellings against PyYAML's regular expressions, tried in
// order, for scalars starting with the characters it looks up.
func TestResolveFastPathMatchesResolvers(t *testing.T) {
	slow := func(v string) string {
		for _, r := range implicitResolvers {
			if r.re.MatchString(v) {
				return r.tag
			}
		}
		return tagStr
	}
	values := []string{"y", "yes", "Yes", "YES", "yEs", "n", "no", "No", "NO", "null", "Null", "NULL", "nULL", "none",
		"t", "true", "True", "TRUE", "tRue", "test.nop", "f", "false", "False", "FALSE", "file.managed", "o", "on", "On",
		"ON", "oN", "off", "Off", "OFF", "oFF", "~", "~~", "<", "<<", "<<<", "=", "==", "yes ", "on\\n", "true1"}
	for _, c := range "yYnNtTfFoO~<=" {
		values = append(values, string(c), string(c)+"x")
	}
	for _, v := range values {
		if got, want := resolveImplicit(v), slow(v); got != want {
			t.Errorf("resolveImplicit(%q) = %s, PyYAML's resolvers give %s", v, got, want)
		}
	}
}
