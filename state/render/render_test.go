package render

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

// fakeJinja substitutes {{ sls }} and fails on "{{ boom }}".
func fakeJinja(_ context.Context, src, _ string, vars map[string]any) (string, error) {
	if strings.Contains(src, "{{ boom }}") {
		return "", errors.New("Jinja variable 'boom' is undefined")
	}
	return strings.ReplaceAll(src, "{{ sls }}", vars["sls"].(string)), nil
}

func TestPipe(t *testing.T) {
	tests := []struct{ src, want string }{
		{"a: 1\n", "jinja|yaml"},
		{"#!yaml\na: 1\n", "yaml"},
		{"#!jinja|json\n{}", "jinja|json"},
		{"#!/bin/sh\n", "jinja|yaml"},
		{"#! yaml | gpg \n", " yaml | gpg"},
	}
	for _, tc := range tests {
		if got := Pipe([]byte(tc.src), "jinja|yaml"); got != tc.want {
			t.Errorf("Pipe(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestRender(t *testing.T) {
	r := &Renderer{Jinja: fakeJinja}
	ctx := context.Background()
	c := Context{Saltenv: "base", SLS: "web", Rel: "web/init.sls"}
	tests := []struct {
		name, src string
		want      any
		err       string
	}{
		{"default jinja|yaml", "id: {{ sls }}\n", ordered.FromPairs("id", "web"), ""},
		{"yaml only keeps braces", "#!yaml\nid: '{{ sls }}'\n", ordered.FromPairs("id", "{{ sls }}"), ""},
		{"jinja|json drops the shebang", "#!jinja|json\n{\"id\": \"{{ sls }}\"}", ordered.FromPairs("id", "web"), ""},
		{"json", "#!json\n{\"a\": [1]}", ordered.FromPairs("a", []any{1}), ""},
		{"empty", "  \n", ordered.New(), ""},
		{"gpg is not supported", "#!yaml|gpg\na: 1\n", nil, "the \"gpg\" renderer is not supported by Brine: renderer not supported"},
		{"unknown renderer renders nothing", "#!nosuch\na: 1\n", ordered.New(), ""},
		{"jinja error", "a: {{ boom }}\n", nil, "Jinja variable 'boom' is undefined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Render(ctx, []byte(tc.src), c)
			if tc.err != "" {
				var re *RenderError
				if !errors.As(err, &re) || err.Error() != tc.err {
					t.Fatalf("err = %v, want RenderError %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b *ordered.Map) bool {
				ja, _ := a.MarshalJSON()
				jb, _ := b.MarshalJSON()
				return string(ja) == string(jb)
			})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSLSContext(t *testing.T) {
	got := SLSContext("/srv/salt/web/server/init.sls", "web/server/init.sls", "web.server")
	want := map[string]any{
		"tplpath": "/srv/salt/web/server/init.sls", "tplfile": "web/server/init.sls", "tpldir": "web/server",
		"tpldot": "web.server", "slspath": "web/server", "slsdotpath": "web.server",
		"slscolonpath": "web:server", "sls_path": "web_server",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("init.sls (-want +got):\n%s", diff)
	}
	got = SLSContext("/srv/salt/top.sls", "top.sls", "")
	if got["tpldir"] != "." || got["slspath"] != "" || got["tplfile"] != "top.sls" {
		t.Errorf("top.sls context = %v", got)
	}
}

// FuzzRender feeds arbitrary SLS sources with arbitrary shebangs through
// the pipeline: it must return data or a RenderError, never panic.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"a: 1\n", "#!yaml\na: {{ x }}\n", "#!jinja|json\n{}", "#!json\n[1,", "#!yaml|gpg\n", "#!\n", "#!|||\nx", "#!/bin/sh\n"} {
		f.Add(s)
	}
	r := &Renderer{Jinja: fakeJinja}
	f.Fuzz(func(t *testing.T, src string) {
		_, err := r.Render(context.Background(), []byte(src), Context{Saltenv: "base", SLS: "f", Rel: "f.sls"})
		var re *RenderError
		if err != nil && !errors.As(err, &re) {
			t.Fatalf("error %v is not a RenderError", err)
		}
	})
}
