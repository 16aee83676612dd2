package pillar

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/compile"
)

// aliasBomb is nine levels of nine aliases: 9^9 values in nine lines.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", ") + "]\n")
		prev = n
	}
	return b.String()
}

// A pillar SLS holding an alias bomb used to run the process out of
// memory in MergeRecurse's DeepCopy; it is now a pillar error naming the
// file and line, and the other files still compile.
func TestCompileRefusesAliasBomb(t *testing.T) {
	files := memSource{
		"top.sls":  "base:\n  '*':\n    - ok\n    - bomb\n",
		"ok.sls":   "fine: 1\n",
		"bomb.sls": aliasBomb(),
	}
	var logs bytes.Buffer
	c := &Compiler{Files: files, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Render: func(_ context.Context, src []byte, rel, _, _ string) (any, error) { return saltyaml.Load(src, rel) },
		Match:  func(tgt any, _ string) (bool, error) { return compile.Fnmatch("minion", ordered.KeyString(tgt)), nil },
	}
	p, err := c.Compile(context.Background())
	if err != nil {
		p = ordered.FromPairs("_errors", []any{err.Error()})
	}
	// Salt's safe render error on the minion, the detail in the master log.
	errs, _ := p.Value("_errors").([]any)
	if len(errs) != 1 || ordered.KeyString(errs[0]) != "Rendering SLS 'bomb' failed. Please see master log for details." || p.Value("fine") != 1 {
		t.Fatalf("pillar = %v, want the other file and one error for bomb", p)
	}
	if l := logs.String(); !strings.Contains(l, `\"bomb.sls\", line 7`) || !strings.Contains(l, "alias bomb") {
		t.Errorf("master log = %s, want the file and line of the bomb", l)
	}
}
