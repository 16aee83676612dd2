package output

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

func init() { Register("pprint", pprintFunc) }

// pprintFunc is salt/output/pprint_out.py: pprint.pformat(data), with
// indent=output_indent when that is 0 or more. "pretty" makes Python
// raise TypeError (str >= int) and Salt falls back to nested.
func pprintFunc(data any, opts Options) (string, error) {
	if opts.IndentPretty {
		return Nested(data, opts), nil
	}
	indent := 1
	if opts.Indent != nil && *opts.Indent >= 0 {
		indent = *opts.Indent
	}
	return PFormat(data, indent, 80), nil
}

// PFormat is Python's pprint.pformat(v, indent=indent, width=width) with
// sort_dicts on: the repr when it fits, otherwise dicts and lists one
// item per line and long strings split at whitespace into adjacent
// literals.
func PFormat(v any, indent, width int) string {
	p := pprinter{indent: indent, width: width}
	p.format(v, 0, 0, 0)
	return p.b.String()
}

type pprinter struct {
	b      strings.Builder
	indent int
	width  int
}

func (p *pprinter) format(v any, indent, allowance, level int) {
	rep := safeRepr(v)
	if utf8.RuneCountInString(rep) > p.width-indent-allowance {
		switch x := v.(type) {
		case *ordered.Map:
			p.dict(x, indent, allowance, level+1)
			return
		case []any:
			p.list(x, indent, allowance, level+1)
			return
		case string:
			p.str(x, indent, allowance, level+1)
			return
		}
	}
	p.b.WriteString(rep)
}

func (p *pprinter) dict(m *ordered.Map, indent, allowance, level int) {
	p.b.WriteByte('{')
	if p.indent > 1 {
		p.b.WriteString(strings.Repeat(" ", p.indent-1))
	}
	items := pprintSorted(m)
	indent += p.indent
	delim := ",\n" + strings.Repeat(" ", indent)
	for i, e := range items {
		last := i == len(items)-1
		rep := safeRepr(e.Key)
		p.b.WriteString(rep)
		p.b.WriteString(": ")
		a := 1
		if last {
			a = allowance + 1
		}
		p.format(e.Value, indent+utf8.RuneCountInString(rep)+2, a, level)
		if !last {
			p.b.WriteString(delim)
		}
	}
	p.b.WriteByte('}')
}

func (p *pprinter) list(l []any, indent, allowance, level int) {
	p.b.WriteByte('[')
	indent += p.indent
	if p.indent > 1 {
		p.b.WriteString(strings.Repeat(" ", p.indent-1))
	}
	delim := ",\n" + strings.Repeat(" ", indent)
	for i, e := range l {
		if i > 0 {
			p.b.WriteString(delim)
		}
		a := 1
		if i == len(l)-1 {
			a = allowance + 1
		}
		p.format(e, indent, a, level)
	}
	p.b.WriteByte(']')
}

var wordSpace = regexp.MustCompile(`\S*\s*`)

// str is PrettyPrinter._pprint_str: each line, and each over-long line
// at word boundaries, becomes its own literal; at the top level the
// literals are wrapped in parentheses.
func (p *pprinter) str(s string, indent, allowance, level int) {
	if s == "" {
		p.b.WriteString(py.QuoteString(s))
		return
	}
	lines := pySplitLinesKeep(s)
	if level == 1 {
		indent++
		allowance++
	}
	maxWidth := p.width - indent
	maxWidth1 := maxWidth
	var chunks []string
	rep := ""
	for i, line := range lines {
		rep = py.QuoteString(line)
		lastLine := i == len(lines)-1
		if lastLine {
			maxWidth1 -= allowance
		}
		if utf8.RuneCountInString(rep) <= maxWidth1 {
			chunks = append(chunks, rep)
			continue
		}
		parts := wordSpace.FindAllString(line, -1)
		maxWidth2 := maxWidth
		current := ""
		for j, part := range parts {
			candidate := current + part
			if j == len(parts)-1 && lastLine {
				maxWidth2 -= allowance
			}
			if utf8.RuneCountInString(py.QuoteString(candidate)) > maxWidth2 {
				if current != "" {
					chunks = append(chunks, py.QuoteString(current))
				}
				current = part
			} else {
				current = candidate
			}
		}
		if current != "" {
			chunks = append(chunks, py.QuoteString(current))
		}
	}
	if len(chunks) == 1 {
		p.b.WriteString(rep)
		return
	}
	if level == 1 {
		p.b.WriteByte('(')
	}
	for i, c := range chunks {
		if i > 0 {
			p.b.WriteString("\n" + strings.Repeat(" ", indent))
		}
		p.b.WriteString(c)
	}
	if level == 1 {
		p.b.WriteByte(')')
	}
}

// safeRepr is pprint's _safe_repr: repr with dicts sorted at every level.
func safeRepr(v any) string {
	switch x := v.(type) {
	case *ordered.Map:
		var b strings.Builder
		b.WriteByte('{')
		for i, e := range pprintSorted(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(safeRepr(e.Key))
			b.WriteString(": ")
			b.WriteString(safeRepr(e.Value))
		}
		b.WriteByte('}')
		return b.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = safeRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return py.Repr(v)
}

// pprintSorted orders entries as sorted(items, key=_safe_tuple): by
// value within comparable kinds, else by Python type name.
func pprintSorted(m *ordered.Map) []py.Item {
	out := py.Items(m)
	slices.SortStableFunc(out, func(a, b py.Item) int {
		if py.Sortable([]py.Item{a, b}) {
			return py.Compare(a.Key, b.Key)
		}
		return cmp.Compare(py.TypeName(a.Key), py.TypeName(b.Key))
	})
	return out
}
