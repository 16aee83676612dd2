package cmd

import (
	"strings"
	"testing"
)

func FuzzShlexSplit(f *testing.F) {
	f.Add(`echo "a b" 'c d' e\ f`)
	f.Add(`"unterminated`)
	f.Fuzz(func(t *testing.T, s string) {
		words, err := ShlexSplit(s)
		if err != nil {
			return
		}
		for _, w := range words {
			if strings.ContainsAny(s, `"'\`) {
				continue
			}
			if strings.ContainsAny(w, " \t\n\r") {
				t.Fatalf("unquoted input %q split into word with blank %q", s, w)
			}
		}
	})
}
