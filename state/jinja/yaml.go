package jinja

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/state/ordered"
)

// A small emitter reproducing PyYAML's safe_dump as Salt's yaml filter
// calls it (salt/utils/jinja.py format_yaml → salt.utils.yaml.safe_dump
// with allow_unicode, sorted keys, width 80): flow style on one line
// (wrapped past column 80 as PyYAML does), or block style.

const yamlWidth = 80

var yamlImplicit = regexp.MustCompile(`^(?:` +
	`yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF` +
	`|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` +
	`|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` +
	`|~|null|Null|NULL|` +
	`|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)?` +
	`|<<|=)$`)

type yamlEmitter struct {
	b      strings.Builder
	column int
	// whitespace reports whether the last written char was a space or
	// line start, as PyYAML tracks it.
	whitespace bool
}

func (e *yamlEmitter) write(s string) {
	e.b.WriteString(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		e.column = len([]rune(s[i+1:]))
	} else {
		e.column += len([]rune(s))
	}
	if s != "" {
		e.whitespace = strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\n")
	}
}

func (e *yamlEmitter) indent(n int) {
	e.write("\n" + strings.Repeat(" ", n))
	e.whitespace = true
}

// yamlDump renders v (in Brine's value model) like safe_dump, trimmed as
// format_yaml does (strip, then drop a trailing "\n...").
func yamlDump(v any, flow bool) (string, error) {
	e := &yamlEmitter{whitespace: true}
	var err error
	if flow {
		err = e.flowNode(v, 0, false)
	} else {
		err = e.blockNode(v, 0, false)
	}
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(e.b.String())
	if !isCollection(v) {
		s = strings.TrimSpace(s + "\n...")
		s = strings.TrimSuffix(s, "\n...")
	}
	return s, nil
}

func isCollection(v any) bool {
	switch v.(type) {
	case []any, *ordered.Map:
		return true
	}
	return false
}

func sortedKeys(m *ordered.Map) ([]any, error) {
	keys := m.Keys()
	return keys, sortValues(keys, nil, false)
}

func (e *yamlEmitter) flowNode(v any, ind int, key bool) error {
	switch x := v.(type) {
	case []any:
		e.writeIndicator("[", true)
		e.whitespace = true
		inner := ind + 2
		for i, it := range x {
			if i > 0 {
				e.writeIndicator(",", false)
			}
			if e.column > yamlWidth {
				e.indent(inner)
			}
			if err := e.flowNode(it, inner, false); err != nil {
				return err
			}
		}
		e.writeIndicator("]", false)
	case *ordered.Map:
		keys, err := sortedKeys(x)
		if err != nil {
			return err
		}
		e.writeIndicator("{", true)
		e.whitespace = true
		inner := ind + 2
		for i, k := range keys {
			if i > 0 {
				e.writeIndicator(",", false)
			}
			if e.column > yamlWidth {
				e.indent(inner)
			}
			if err := e.flowNode(k, inner, true); err != nil {
				return err
			}
			e.writeIndicator(":", false)
			if err := e.flowNode(x.Value(k), inner, false); err != nil {
				return err
			}
		}
		e.writeIndicator("}", false)
	default:
		return e.scalar(v, ind, true, key)
	}
	return nil
}

// writeIndicator mirrors Emitter.write_indicator: a space first unless
// the previous char was whitespace or the indicator needs none.
func (e *yamlEmitter) writeIndicator(ind string, needSpace bool) {
	if !e.whitespace && needSpace {
		ind = " " + ind
	}
	e.write(ind)
}

func (e *yamlEmitter) blockNode(v any, ind int, inSeq bool) error {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return e.flowNode(x, ind, false)
		}
		for i, it := range x {
			if i > 0 || !inSeq && e.b.Len() > 0 {
				e.indent(ind)
			}
			e.write("- ")
			if err := e.blockNode(it, ind+2, true); err != nil {
				return err
			}
		}
	case *ordered.Map:
		if x.Len() == 0 {
			return e.flowNode(x, ind, false)
		}
		keys, err := sortedKeys(x)
		if err != nil {
			return err
		}
		for i, k := range keys {
			if i > 0 || !inSeq && e.b.Len() > 0 {
				e.indent(ind)
			}
			if err := e.scalar(k, ind, false, true); err != nil {
				return err
			}
			e.write(":")
			val := x.Value(k)
			switch vv := val.(type) {
			case []any:
				if len(vv) > 0 {
					if err := e.blockNode(vv, ind, false); err != nil {
						return err
					}
					continue
				}
			case *ordered.Map:
				if vv.Len() > 0 {
					if err := e.blockNode(vv, ind+2, false); err != nil {
						return err
					}
					continue
				}
			}
			e.write(" ")
			if err := e.blockNode(val, ind+2, false); err != nil {
				return err
			}
		}
	default:
		return e.scalar(v, ind, false, false)
	}
	return nil
}

func yamlFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	s := strings.ToLower(ordered.FormatFloat(f))
	if !strings.Contains(s, ".") && strings.Contains(s, "e") {
		s = strings.Replace(s, "e", ".0e", 1)
	}
	return s
}

func (e *yamlEmitter) scalar(v any, ind int, flow, key bool) error {
	var text string
	switch x := v.(type) {
	case nil:
		text = "null"
	case bool:
		text = strconv.FormatBool(x)
	case int:
		text = strconv.Itoa(x)
	case float64:
		text = yamlFloat(x)
	case string:
		return e.str(x, ind, flow, key)
	default:
		return typeErr("cannot represent an object: %s", pyRepr(v))
	}
	if !e.whitespace {
		text = " " + text
	}
	e.write(text)
	return nil
}

type yamlAnalysis struct {
	multiline, allowFlowPlain, allowBlockPlain, allowSingle, empty bool
}

func yamlPrintable(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0x7e || r == 0x85 ||
		r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd && r != 0xfeff || r >= 0x10000 && r <= 0x10ffff
}

// analyzeScalar follows Emitter.analyze_scalar.
func analyzeScalar(s string) yamlAnalysis {
	if s == "" {
		return yamlAnalysis{empty: true, allowSingle: true}
	}
	var blockInd, flowInd, lineBreaks, special bool
	var leadSpace, leadBreak, trailSpace, trailBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockInd, flowInd = true, true
	}
	rs := []rune(s)
	precededByWS := true
	isBreak := func(r rune) bool { return r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029 }
	isWSorEnd := func(i int) bool { return i >= len(rs) || rs[i] == ' ' || rs[i] == '\t' || isBreak(rs[i]) || rs[i] == 0 }
	prevSpace, prevBreak := false, false
	for i, c := range rs {
		followedByWS := isWSorEnd(i + 1)
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", c) {
				flowInd, blockInd = true, true
			}
			if c == '?' || c == ':' {
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			}
			if c == '-' && followedByWS {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", c) {
				flowInd = true
			}
			if c == ':' {
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			}
			if c == '#' && precededByWS {
				flowInd, blockInd = true, true
			}
		}
		if isBreak(c) {
			lineBreaks = true
		}
		if !(c == '\n' || c >= 0x20 && c <= 0x7e) {
			unicodeOK := c == 0x85 || c >= 0xa0 && c <= 0xd7ff || c >= 0xe000 && c <= 0xfffd || c >= 0x10000 && c <= 0x10ffff
			if !unicodeOK || c == 0xfeff {
				special = true
			}
		}
		switch {
		case c == ' ':
			if i == 0 {
				leadSpace = true
			}
			if i == len(rs)-1 {
				trailSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case isBreak(c):
			if i == 0 {
				leadBreak = true
			}
			if i == len(rs)-1 {
				trailBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		precededByWS = strings.ContainsRune("\x00 \t\r\n\u0085\u2028\u2029", c)
	}
	a := yamlAnalysis{allowFlowPlain: true, allowBlockPlain: true, allowSingle: true, multiline: lineBreaks}
	if leadSpace || leadBreak || trailSpace || trailBreak {
		a.allowFlowPlain, a.allowBlockPlain = false, false
	}
	if breakSpace {
		a.allowFlowPlain, a.allowBlockPlain, a.allowSingle = false, false, false
	}
	if spaceBreak || special {
		a.allowFlowPlain, a.allowBlockPlain, a.allowSingle = false, false, false
	}
	if lineBreaks {
		a.allowFlowPlain, a.allowBlockPlain = false, false
	}
	if flowInd {
		a.allowFlowPlain = false
	}
	if blockInd {
		a.allowBlockPlain = false
	}
	return a
}

func (e *yamlEmitter) str(s string, ind int, flow, key bool) error {
	a := analyzeScalar(s)
	plain := !yamlImplicit.MatchString(s) && !a.empty && !(key && a.multiline) &&
		(flow && a.allowFlowPlain || !flow && a.allowBlockPlain)
	// PyYAML raises the indent by two while it writes a scalar.
	switch {
	case plain:
		e.writePlain(s, ind+2, !key)
	case a.allowSingle && !(key && a.multiline):
		e.writeSingle(s, ind+2, !key)
	default:
		e.writeDouble(s, ind+2)
	}
	return nil
}

func (e *yamlEmitter) writePlain(s string, ind int, split bool) {
	if !e.whitespace {
		e.write(" ")
	}
	words := strings.Split(s, " ")
	for i, w := range words {
		if i > 0 {
			if split && e.column > yamlWidth && w != "" && words[i-1] != "" {
				e.indent(ind)
			} else {
				e.write(" ")
			}
		}
		e.write(w)
	}
	e.whitespace = false
}

func (e *yamlEmitter) writeSingle(s string, ind int, split bool) {
	e.writeIndicator("'", true)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' && split && e.column > yamlWidth && i > 0 && i+1 < len(rs) && rs[i-1] != ' ' && rs[i+1] != ' ':
			e.indent(ind)
		case c == '\n':
			j := i
			for j < len(rs) && rs[j] == '\n' {
				j++
			}
			e.write(strings.Repeat("\n", j-i+1))
			e.write(strings.Repeat(" ", ind))
			i = j - 1
		case c == '\'':
			e.write("''")
		default:
			e.write(string(c))
		}
	}
	e.write("'")
	e.whitespace = false
}

var yamlEscapes = map[rune]string{
	0: "0", 7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 27: "e",
	'"': "\"", '\\': "\\", 0x85: "N", 0xa0: "_", 0x2028: "L", 0x2029: "P",
}

// yamlDoubleQuote is Emitter.write_double_quoted with an unbounded width
// and without allow_unicode, as Salt's yaml_dquote builds it.
func yamlDoubleQuote(s string) string { return yamlDQ(s, false) }

func yamlDQ(s string, allowUnicode bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		plain := c >= 0x20 && c <= 0x7e ||
			allowUnicode && (c >= 0xa0 && c <= 0xd7ff || c >= 0xe000 && c <= 0xfffd)
		if plain && c != '"' && c != '\\' && c != 0xfeff {
			b.WriteRune(c)
			continue
		}
		if esc, ok := yamlEscapes[c]; ok {
			b.WriteString("\\" + esc)
			continue
		}
		switch {
		case c <= 0xff:
			b.WriteString("\\x" + leftPad(strconv.FormatInt(int64(c), 16), 2))
		case c <= 0xffff:
			b.WriteString("\\u" + leftPad(strconv.FormatInt(int64(c), 16), 4))
		default:
			b.WriteString("\\U" + leftPad(strconv.FormatInt(int64(c), 16), 8))
		}
	}
	b.WriteByte('"')
	return b.String()
}

func leftPad(s string, n int) string {
	return strings.Repeat("0", max(n-len(s), 0)) + strings.ToUpper(s)
}

// yamlSingleQuote is Salt's yaml_squote.
func yamlSingleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func (e *yamlEmitter) writeDouble(s string, _ int) {
	q := yamlDQ(s, true)
	if !e.whitespace {
		q = " " + q
	}
	e.write(q)
	e.whitespace = false
}
