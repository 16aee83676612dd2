package output

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

func init() { Register("nested", nestedFunc) }

func nestedFunc(data any, opts Options) (string, error) {
	return Nested(data, opts), nil
}

// Nested renders data as salt/output/nested.py does: dict keys sorted,
// each key on its own line followed by ":" with its value four columns
// further in; a "----------" line above every dict that is not at the
// left margin; list scalars prefixed "- "; dicts and lists inside lists
// introduced by a "|_" line and indented two columns; strings split into
// lines with ESC replaced by "?"; None, booleans and numbers as Python
// prints them. Keys and separators are cyan, strings green, scalars
// light yellow, and keys, separators and "|_" red when Retcode is not 0.
func Nested(data any, opts Options) string {
	n := nestDisplay{c: Colors(opts.Color), opts: opts}
	n.display(data, opts.NestedIndent, "")
	return strings.Join(n.out, "\n")
}

type nestDisplay struct {
	c    Palette
	opts Options
	out  []string
}

func (n *nestDisplay) line(indent int, color, msg, prefix, suffix string) {
	n.out = append(n.out, strings.Repeat(" ", indent)+color+prefix+msg+n.c.EndC+suffix)
}

// keyColor is cyan, or red for a failed return.
func (n *nestDisplay) keyColor() string {
	if n.opts.Retcode != 0 {
		return n.c.Red
	}
	return n.c.Cyan
}

func (n *nestDisplay) display(v any, indent int, prefix string) {
	switch x := v.(type) {
	case nil, bool, int, int64, float64:
		n.line(indent, n.c.LightYellow, py.Repr(x), prefix, "")
	case string:
		for i, l := range pySplitLines(x) {
			p := prefix
			if i > 0 {
				p = strings.Repeat(" ", len([]rune(prefix)))
			}
			if !n.opts.KeepEscapes {
				l = strings.ReplaceAll(l, "\x1b", "?")
			}
			n.line(indent, n.c.Green, l, p, "")
		}
	case []any:
		n.list(x, indent)
	case *ordered.Map:
		n.dict(x, indent, prefix)
	default:
		n.line(indent, n.c.Green, py.Str(x), prefix, "")
	}
}

func (n *nestDisplay) list(x []any, indent int) {
	color := n.c.Green
	if n.opts.Retcode != 0 {
		color = n.c.Red
	}
	for _, e := range x {
		switch e.(type) {
		case *ordered.Map:
			n.line(indent, color, "|_", "", "")
			n.display(e, indent+2, "")
		case []any:
			n.line(indent, color, "|_", "", "")
			n.display(e, indent+2, "- ")
		default:
			n.display(e, indent, "- ")
		}
	}
}

func (n *nestDisplay) dict(m *ordered.Map, indent int, prefix string) {
	if indent != 0 {
		n.line(indent, n.keyColor(), "----------", "", "")
	}
	for _, e := range sortedItems(m) {
		n.line(indent, n.keyColor(), ordered.KeyString(e.Key), prefix, ":")
		n.display(e.Value, indent+4, "")
	}
}

// pySplitLines is Python's str.splitlines(): lines without their ends,
// split at \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85, U+2028 and U+2029; no
// empty last line for a trailing break and nothing for "".
func pySplitLines(s string) []string {
	var out []string
	for s != "" {
		i, w := lineBreak(s)
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		s = s[i+w:]
	}
	return out
}

// pySplitLinesKeep is splitlines(True): each line keeps its break.
func pySplitLinesKeep(s string) []string {
	var out []string
	for s != "" {
		i, w := lineBreak(s)
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+w])
		s = s[i+w:]
	}
	return out
}

// lineBreak finds the first line boundary: its byte index and width.
func lineBreak(s string) (int, int) {
	for i, r := range s {
		switch r {
		case '\r':
			if strings.HasPrefix(s[i:], "\r\n") {
				return i, 2
			}
			return i, 1
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e:
			return i, 1
		case 0x85:
			return i, 2
		case 0x2028, 0x2029:
			return i, 3
		}
	}
	return -1, 0
}
