package roster

import (
	"errors"
	"strings"
)

// shlexSplit splits s as Python's shlex.split does in POSIX mode: words
// separated by whitespace, single quotes literal, double quotes honouring
// backslash only before \ " $ ` and newline, and backslash escaping any
// character outside quotes. shlex.split turns comments off, so # is an
// ordinary character.
func shlexSplit(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			inWord = true
			if i+1 >= len(rs) {
				return nil, errors.New("no escaped character")
			}
			i++
			cur.WriteRune(rs[i])
		case c == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j >= len(rs) {
				return nil, errors.New("no closing quotation")
			}
			cur.WriteString(string(rs[i+1 : j]))
			i = j
		case c == '"':
			inWord = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\\\"$`\n", rs[j+1]) {
					j++
				}
				cur.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, errors.New("no closing quotation")
			}
			i = j
		default:
			inWord = true
			cur.WriteRune(c)
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
