package netapi

import (
	"errors"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestAccept(t *testing.T) {
	for _, tc := range []struct {
		header  string
		present bool
		want    string
		code    int
	}{
		{"", false, mediaJSON, 0},
		{"*/*", true, mediaJSON, 0},
		{"application/json", true, mediaJSON, 0},
		{"application/x-yaml", true, mediaYAML, 0},
		// CherryPy orders ranges of equal q by their text, descending.
		{"application/json, application/x-yaml", true, mediaYAML, 0},
		{"application/x-yaml;q=0.5, application/json", true, mediaJSON, 0},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true, mediaJSON, 0},
		{"application/*", true, mediaJSON, 0},
		{"text/html", true, "", 406},
		{"application/json;q=0", true, "", 406},
		{"application/json;q=abc", true, "", 400},
	} {
		got, err := accept(tc.header, tc.present, outMedia)
		var he *HTTPError
		if tc.code != 0 {
			if !errors.As(err, &he) || he.Code != tc.code {
				t.Errorf("accept(%q): %v, want %d", tc.header, err, tc.code)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("accept(%q) = %q, %v; want %q", tc.header, got, err, tc.want)
		}
	}
	_, err := accept("text/html", true, outMedia)
	want := "Your client sent this Accept header: text/html. But this resource only emits these media types: application/json, application/x-yaml."
	if err.(*HTTPError).Message != want {
		t.Errorf("406 message %q", err.(*HTTPError).Message)
	}
}

func TestRender(t *testing.T) {
	v := ordered.FromPairs("return", []any{ordered.FromPairs("m1", "é", "m2", true)})
	js, err := render(mediaJSON, v)
	if err != nil || string(js) != `{"return": [{"m1": "é", "m2": true}]}` {
		t.Errorf("json %s %v", js, err)
	}
	y, err := render(mediaYAML, v)
	if err != nil || string(y) != "return:\n- m1: é\n  m2: true\n" {
		t.Errorf("yaml %q %v", y, err)
	}
}
