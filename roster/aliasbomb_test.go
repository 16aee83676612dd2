package roster

import (
	"context"
	"strings"
	"testing"
)

// aliasBomb is nine levels of nine aliases (9^9 values), under key top.
func aliasBomb(top string) string {
	var b strings.Builder
	b.WriteString(top + ":\n  host: h\n  minion_opts:\n    a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString("    " + n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", ") + "]\n")
		prev = n
	}
	return b.String()
}

// A roster with an alias bomb is refused with its file and line instead
// of expanding into every target's minion_opts.
func TestParseFlatRefusesAliasBomb(t *testing.T) {
	_, err := ParseFlat(context.Background(), []byte(aliasBomb("web1")), "/etc/salt/roster", testConfig())
	errs := Errors(err)
	if len(errs) != 1 || errs[0].File != "/etc/salt/roster" || errs[0].Line != 10 || !strings.Contains(errs[0].Msg, "alias bomb") {
		t.Fatalf("err = %v, want one alias bomb error at /etc/salt/roster line 10", err)
	}
}
