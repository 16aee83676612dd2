package ordered

import (
	"bytes"
	"testing"
)

// FuzzParseJSON checks ParseJSON against DecodeJSON, the encoding/json
// reader: whatever ParseJSON accepts, DecodeJSON reads the same.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": 1, "b": [true, false, null, 2.5, -0, 1e3, "x\u00e9\ud83d\ude00"], "c": {}}`,
		`"\ud800"`, `"\ud800\u0041"`, `[1, 2`, `{"a":1}{`, `123456789012345678901234567890`, `-0.0`, `"caf\xe9"`,
		`{"a": 1, "a": 2}`, ` [ ] `, `01`, `1.`, `"\x01"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseJSON([]byte(s))
		if err != nil {
			return
		}
		want, err := DecodeJSON(bytes.NewReader([]byte(s)))
		if err != nil {
			t.Fatalf("ParseJSON read %q, DecodeJSON refused it: %v", s, err)
		}
		if !Equal(got, want) {
			t.Fatalf("%q: ParseJSON %#v, DecodeJSON %#v", s, got, want)
		}
	})
}

func BenchmarkParseJSON(b *testing.B) {
	s := []byte(`{"cmd": "_return", "id": "swarm-00001", "success": true, "return": true, "retcode": 0, "jid": "20261202071650123456", "fun": "test.ping", "fun_args": [], "_stamp": "2026-12-02T07:16:50.123456"}`)
	for i := 0; i < b.N; i++ {
		if _, err := ParseJSON(s); err != nil {
			b.Fatal(err)
		}
	}
}
