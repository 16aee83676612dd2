package jinja

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/brinesalt/brine/state/ordered"
)

func TestZZDiff(t *testing.T) {
	data, err := os.ReadFile("/tmp/diff/cases.json")
	if err != nil {
		t.Skip()
	}
	var cases []conformanceCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, c := range cases {
		vars := map[string]any{}
		v, _ := ordered.DecodeJSON(bytes.NewReader(c.Vars))
		v.(*ordered.Map).Range(func(k, val any) bool { vars[k.(string)] = val; return true })
		out, err := Render(context.Background(), c.Template, Options{Vars: vars})
		var e *Error
		errors.As(err, &e)
		switch {
		case c.Output != nil && err != nil:
			t.Logf("%s\n  want %q\n  got error %v", c.Template, *c.Output, e.Msg)
			bad++
		case c.Output != nil && out != *c.Output:
			t.Logf("%s\n  want %q\n  got  %q", c.Template, *c.Output, out)
			bad++
		case c.Output == nil && err == nil:
			t.Logf("%s\n  want error %q\n  got  %q", c.Template, c.Error, out)
			bad++
		case c.Output == nil && e.Msg != c.Error:
			t.Logf("%s\n  want error %q\n  got  error %q", c.Template, c.Error, e.Msg)
			bad++
		}
	}
	t.Logf("%d/%d differ", bad, len(cases))
}
