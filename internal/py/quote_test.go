package py

import "testing"

// Expected strings are Python 3's json.dumps(s) and json.dumps(s,
// ensure_ascii=True) (its default).
func TestQuoteJSON(t *testing.T) {
	for _, c := range []struct {
		in    string
		ascii bool
		want  string
	}{
		{"a\"b\\c", false, `"a\"b\\c"`},
		{"\n\r\t\b\f\x01", false, `"\n\r\t\b\f\u0001"`},
		{"é€😀", false, `"é€😀"`},
		{"é€😀\x7f", true, `"\u00e9\u20ac\ud83d\ude00\u007f"`},
		{"~", true, `"~"`},
	} {
		if got := QuoteJSON(c.in, c.ascii); got != c.want {
			t.Errorf("QuoteJSON(%q, %v) = %s, want %s", c.in, c.ascii, got, c.want)
		}
	}
}
