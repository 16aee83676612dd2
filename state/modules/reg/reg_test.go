package reg

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCastVdata(t *testing.T) {
	cases := []struct {
		vdata any
		vtype string
		want  any
		err   bool
	}{
		{"x", "REG_SZ", "x", false},
		{7, "REG_SZ", "7", false},
		{"12", "REG_DWORD", 12, false},
		{true, "REG_DWORD", 1, false},
		{"z", "REG_DWORD", nil, true},
		{[]any{"a", 1}, "REG_MULTI_SZ", []any{"a", "1"}, false},
		{"ab", "REG_MULTI_SZ", []any{"a", "b"}, false},
		{"x", "REG_BOGUS", nil, true},
	}
	for _, c := range cases {
		got, err := CastVdata(c.vdata, c.vtype)
		if (err != nil) != c.err || !cmp.Equal(got, c.want) {
			t.Errorf("CastVdata(%v, %s) = %v, %v; want %v (error %v)", c.vdata, c.vtype, got, err, c.want, c.err)
		}
	}
}

func TestParseKey(t *testing.T) {
	if h, k := ParseKey(`HKLM\SOFTWARE\Salt\x`); h != "HKLM" || k != `SOFTWARE\Salt\x` {
		t.Errorf("ParseKey = %q, %q", h, k)
	}
}

func FuzzCastVdata(f *testing.F) {
	for _, s := range []string{"", "0", "-1", "99999999999999999999", "abc", "  12 "} {
		f.Add(s, "REG_DWORD")
		f.Add(s, "REG_MULTI_SZ")
	}
	f.Fuzz(func(t *testing.T, s, vtype string) {
		_, _ = CastVdata(s, vtype)
	})
}
