package output

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

func init() {
	Register("raw", rawFunc)
	Register("txt", txtFunc)
	Register("quiet", quietFunc)
}

// rawFunc is salt/output/raw.py: str(data), Python's repr for anything
// but a string.
func rawFunc(data any, _ Options) (string, error) { return py.Str(data), nil }

// quietFunc prints nothing (Salt's --out=quiet).
func quietFunc(any, Options) (string, error) { return "", nil }

// txtFunc is salt/output/txt.py: for a dict, "key: line" for every line of
// a string value and "key: str(value)" otherwise; a string alone as
// itself; anything else through pprint.pformat.
func txtFunc(data any, _ Options) (string, error) {
	var b strings.Builder
	switch x := data.(type) {
	case *ordered.Map:
		x.Range(func(k, v any) bool {
			key := ordered.KeyString(k)
			if s, ok := v.(string); ok {
				for _, l := range pySplitLines(s) {
					b.WriteString(key + ": " + l + "\n")
				}
				return true
			}
			b.WriteString(key + ": " + py.Str(v) + "\n")
			return true
		})
	case string:
		b.WriteString(x + "\n")
	default:
		b.WriteString(PFormat(data, 1, 80) + "\n")
	}
	return b.String(), nil
}

func init() { Register("no_return", noReturnFunc) }

// noReturnFunc is salt/output/no_return.py, used for minions that did not
// answer: dict keys sorted in cyan with values four columns in, string
// lines (split on "\n" only) in red; other values print nothing.
func noReturnFunc(data any, opts Options) (string, error) {
	c := Colors(opts.Color)
	var b strings.Builder
	var walk func(v any, indent int)
	walk = func(v any, indent int) {
		pad := strings.Repeat(" ", indent)
		switch x := v.(type) {
		case string:
			for _, l := range strings.Split(x, "\n") {
				b.WriteString(c.Red + pad + l + c.EndC + "\n")
			}
		case *ordered.Map:
			for _, e := range sortedItems(x) {
				b.WriteString(c.Cyan + pad + ordered.KeyString(e.Key) + c.EndC + ":\n")
				walk(e.Value, indent+4)
			}
		}
	}
	walk(data, 0)
	return b.String(), nil
}
