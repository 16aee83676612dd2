package render

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// An SLS whose aliases expand to 9^9 values is a render error naming the
// file and line, not an out-of-memory crash in the compiler's copies.
func TestRenderRefusesAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("#!yaml\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", ") + "]\n")
		prev = n
	}
	r := &Renderer{Jinja: fakeJinja}
	_, err := r.Render(context.Background(), []byte(b.String()), Context{Saltenv: "base", SLS: "bomb", Rel: "bomb.sls"})
	var re *RenderError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "alias bomb") || !strings.Contains(err.Error(), `"bomb.sls", line 8`) {
		t.Fatalf("err = %v, want a RenderError naming bomb.sls line 8", err)
	}
}
