package saltyaml

import (
	"errors"
	"strings"
	"testing"
)

// aliasBomb is nine levels of nine aliases: 9^9 values from a dozen lines.
func aliasBomb(indent string) string {
	var b strings.Builder
	b.WriteString(indent + "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(indent + n + ": &" + n + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = n
	}
	return b.String()
}

func TestLoadRefusesAliasBomb(t *testing.T) {
	_, err := Load([]byte("top: 1\n"+aliasBomb("")), "bomb.sls")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *Error", err)
	}
	// 9^7 = 4782969 is the first level past the limit: g, on line 8.
	if e.File != "bomb.sls" || e.Line != 8 || !strings.Contains(e.Error(), "alias bomb") {
		t.Errorf("err = %v (line %d)", err, e.Line)
	}
}

func TestLoadKeepsModestAliases(t *testing.T) {
	// Aliases that expand a little, and a large file with none, still load.
	src := "base: &b {x: 1, y: [1, 2, 3]}\nweb: *b\ndb: *b\nlist: [*b, *b, *b]\n"
	if _, err := Load([]byte(src), "ok.sls"); err != nil {
		t.Fatal(err)
	}
	var big strings.Builder
	for i := 0; i < MaxExpanded/4; i++ {
		big.WriteString("- [1, 2]\n")
	}
	if _, err := Load([]byte(big.String()), "big.sls"); err != nil {
		t.Fatal(err)
	}
}
