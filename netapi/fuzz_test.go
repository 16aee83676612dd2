package netapi

import (
	"errors"
	"testing"
)

// FuzzParseBody: any body of any type parses or fails with an
// HTTPError (never a panic), and what parses is a lowstate or Salt's 400.
func FuzzParseBody(f *testing.F) {
	for _, s := range [][2]string{
		{"application/json", `[{"client": "local", "tgt": "*", "fun": "test.ping", "arg": [1, "a"]}]`},
		{"application/x-yaml", "- client: local\n  tgt: '*'\n  fun: test.ping\n"},
		{"text/plain;charset=UTF-8", `{"fun": "test.ping"}`},
		{"application/x-www-form-urlencoded", "client=local&tgt=*&fun=test.arg&arg=1&arg={a: 1}&kwarg={b: 2}"},
		{"", "a=%zz&b=+&&=x"},
	} {
		f.Add(s[0], []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		b, err := ParseBody(ct, body)
		if err != nil {
			var he *HTTPError
			if !errors.As(err, &he) {
				t.Fatalf("error %v is not an HTTPError", err)
			}
			return
		}
		chunks, err := Lowstate(b.Data)
		if err != nil {
			return
		}
		for _, c := range chunks {
			_ = prepareChunk(c.Copy(), "", "local")
		}
	})
}

// FuzzAccept: any Accept header picks one of the offered types or is a
// 400/406.
func FuzzAccept(f *testing.F) {
	for _, s := range []string{"*/*", "application/json, application/x-yaml", "text/html,*/*;q=0.8",
		"application/*;q=0.5;level=1", `a/b;x="1,2", c/d`, "application/json;q=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		m, err := accept(h, true, outMedia)
		if err != nil {
			var he *HTTPError
			if !errors.As(err, &he) || (he.Code != 400 && he.Code != 406) {
				t.Fatalf("accept(%q): %v", h, err)
			}
			return
		}
		if m != mediaJSON && m != mediaYAML {
			t.Fatalf("accept(%q) = %q", h, m)
		}
	})
}

// FuzzParseForm: a form always parses to a mapping whose arg is a list.
func FuzzParseForm(f *testing.F) {
	for _, s := range []string{"arg=1&arg=2", "arg=%7Ba%3A+1%7D", "kwarg={x: [1,2]}&arg=", "a=b=c&&%%&x=%e2%82"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := ParseForm(s)
		if v, ok := m.Get("arg"); ok {
			if _, isList := v.([]any); !isList {
				t.Fatalf("arg %v is not a list", v)
			}
		}
	})
}
