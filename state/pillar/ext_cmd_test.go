package pillar

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShlexSplit(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{`echo a  b`, []string{"echo", "a", "b"}, ""},
		{`echo '{"a": 1}'`, []string{"echo", `{"a": 1}`}, ""},
		{`echo "x \"y\" \z"`, []string{"echo", `x "y" \z`}, ""},
		{`a\ b c`, []string{"a b", "c"}, ""},
		{`''`, []string{""}, ""},
		{`  `, nil, ""},
		{`echo 'open`, nil, "No closing quotation"},
		{`echo \`, nil, "No escaped character"},
	}
	for _, tc := range tests {
		got, err := shlexSplit(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("shlexSplit(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("shlexSplit(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("shlexSplit(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// FuzzShlexSplit checks that the words of any split command, quoted
// again as shlex.quote does, split back into the same words.
func FuzzShlexSplit(f *testing.F) {
	for _, s := range []string{`echo '{"a": 1}'`, `a\ b "c d" 'e'`, `x"y"z`, `'`, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := shlexSplit(s)
		if err != nil {
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'"'"'`) + "'"
		}
		again, err := shlexSplit(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-split %q: %v", quoted, err)
		}
		if !cmp.Equal(words, again, cmp.Comparer(func(a, b []string) bool {
			return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
		})) {
			t.Fatalf("shlexSplit(%q) = %q, re-split = %q", s, words, again)
		}
	})
}
