package saltyaml

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The emitter reproduces libyaml 0.2.5's (yaml_emitter_*), which Salt
// uses through PyYAML's CSafeDumper: indentation, flow wrapping at the
// best width, scalar style selection and the scalar writers.

const bestWidth = 80

type ctx int

const (
	ctxRoot ctx = iota
	ctxSeq
	ctxMapKey     // simple key
	ctxMapValue   // mapping value
	ctxComplexKey // key after "?"
)

type emitter struct {
	b          strings.Builder
	indent     int
	indents    []int
	flowLevel  int
	column     int
	whitespace bool
	indention  bool
	bestIndent int
}

func newEmitter(indent int) *emitter {
	if indent < 2 || indent > 9 {
		indent = 2
	}
	return &emitter{indent: -1, whitespace: true, indention: true, bestIndent: indent}
}

func (e *emitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent < 0:
		if flow {
			e.indent = e.bestIndent
		} else {
			e.indent = 0
		}
	case !indentless:
		e.indent += e.bestIndent
	}
}

func (e *emitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *emitter) putBreak() {
	e.b.WriteByte('\n')
	e.column = 0
}

func (e *emitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.putBreak()
	}
	for e.column < indent {
		e.b.WriteByte(' ')
		e.column++
	}
	e.whitespace = true
	e.indention = true
}

func (e *emitter) writeIndicator(ind string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.b.WriteByte(' ')
		e.column++
	}
	e.b.WriteString(ind)
	e.column += utf8.RuneCountInString(ind)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

func (e *emitter) node(n *rnode, c ctx) {
	switch n.kind {
	case 's':
		e.scalar(n, c)
	case 'q':
		if e.flowLevel > 0 || n.flow || len(n.items) == 0 {
			e.flowSequence(n)
		} else {
			e.blockSequence(n, c)
		}
	case 'm':
		if e.flowLevel > 0 || n.flow || len(n.items) == 0 {
			e.flowMapping(n)
		} else {
			e.blockMapping(n)
		}
	}
}

func (e *emitter) blockSequence(n *rnode, c ctx) {
	e.increaseIndent(false, c == ctxMapValue && !e.indention)
	for _, item := range n.items {
		e.writeIndent()
		e.writeIndicator("-", true, false, true)
		e.node(item, ctxSeq)
	}
	e.popIndent()
}

func (e *emitter) blockMapping(n *rnode) {
	e.increaseIndent(false, false)
	for i := 0; i < len(n.items); i += 2 {
		k, v := n.items[i], n.items[i+1]
		e.writeIndent()
		if simpleKey(k) {
			e.node(k, ctxMapKey)
			e.writeIndicator(":", false, false, false)
		} else {
			e.writeIndicator("?", true, false, true)
			e.node(k, ctxComplexKey)
			e.writeIndent()
			e.writeIndicator(":", true, false, true)
		}
		e.node(v, ctxMapValue)
	}
	e.popIndent()
}

func (e *emitter) flowSequence(n *rnode) {
	e.writeIndicator("[", true, true, false)
	e.increaseIndent(true, false)
	e.flowLevel++
	for i, item := range n.items {
		if i > 0 {
			e.writeIndicator(",", false, false, false)
		}
		if e.column > bestWidth {
			e.writeIndent()
		}
		e.node(item, ctxSeq)
	}
	e.flowLevel--
	e.popIndent()
	e.writeIndicator("]", false, false, false)
}

func (e *emitter) flowMapping(n *rnode) {
	e.writeIndicator("{", true, true, false)
	e.increaseIndent(true, false)
	e.flowLevel++
	for i := 0; i < len(n.items); i += 2 {
		k, v := n.items[i], n.items[i+1]
		if i > 0 {
			e.writeIndicator(",", false, false, false)
		}
		if e.column > bestWidth {
			e.writeIndent()
		}
		if simpleKey(k) {
			e.node(k, ctxMapKey)
			e.writeIndicator(":", false, false, false)
		} else {
			e.writeIndicator("?", true, false, false)
			e.node(k, ctxComplexKey)
			if e.column > bestWidth {
				e.writeIndent()
			}
			e.writeIndicator(":", true, false, false)
		}
		e.node(v, ctxMapValue)
	}
	e.flowLevel--
	e.popIndent()
	e.writeIndicator("}", false, false, false)
}

// simpleKey is yaml_emitter_check_simple_key for our nodes.
func simpleKey(n *rnode) bool {
	switch n.kind {
	case 's':
		return len(n.value) <= 128 && !analyze(n.value).multiline
	default:
		return len(n.items) == 0
	}
}

func (e *emitter) scalar(n *rnode, c ctx) {
	a := analyze(n.value)
	simple := c == ctxMapKey
	style := e.selectStyle(n, a, simple)
	e.increaseIndent(true, false)
	switch style {
	case '\'':
		e.writeSingleQuoted(n.value, !simple)
	case '"':
		e.writeDoubleQuoted(n.value, !simple)
	default:
		e.writePlain(n.value, !simple)
	}
	e.popIndent()
}

// selectStyle is yaml_emitter_select_scalar_style for an untagged scalar
// whose plain form is implicit unless it is a string that would resolve
// to another type.
func (e *emitter) selectStyle(n *rnode, a scalarAnalysis, simple bool) byte {
	plainImplicit := !n.isStr || resolveImplicit(n.value) == tagStr
	if simple && a.multiline {
		return '"'
	}
	style := byte(0)
	if (e.flowLevel > 0 && !a.flowPlain) || (e.flowLevel == 0 && !a.blockPlain) {
		style = '\''
	}
	if n.value == "" && (e.flowLevel > 0 || simple) {
		style = '\''
	}
	if !plainImplicit {
		style = '\''
	}
	if style == '\'' && !a.singleQuoted {
		style = '"'
	}
	return style
}

type scalarAnalysis struct {
	multiline    bool
	flowPlain    bool
	blockPlain   bool
	singleQuoted bool
}

func isBreak(r rune) bool {
	return r == '\r' || r == '\n' || r == 0x85 || r == 0x2028 || r == 0x2029
}

func isBlankZ(r rune) bool {
	return r == ' ' || r == '\t' || isBreak(r) || r == 0
}

// isPrintable is libyaml's IS_PRINTABLE: unlike PyYAML's own emitter it
// counts NEL and characters beyond the BMP as special, so they are
// written escaped in double quotes.
func isPrintable(r rune) bool {
	switch {
	case r == 0x0A || (r >= 0x20 && r <= 0x7E):
		return true
	case r >= 0xA0 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return r != 0xFEFF
	}
	return false
}

// analyze is yaml_emitter_analyze_scalar with unicode allowed.
func analyze(s string) scalarAnalysis {
	if s == "" {
		return scalarAnalysis{blockPlain: true, singleQuoted: true}
	}
	rs := []rune(s)
	var flowInd, blockInd, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	var prevSpace, prevBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		flowInd, blockInd = true, true
	}
	preceded := true
	followed := len(rs) == 1 || isBlankZ(rs[1])
	for i, r := range rs {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", r) {
				flowInd, blockInd = true, true
			}
			if r == '?' || r == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if r == '-' && followed {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", r) {
				flowInd = true
			}
			if r == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if r == '#' && preceded {
				flowInd, blockInd = true, true
			}
		}
		if !isPrintable(r) || (r == utf8.RuneError && !utf8.ValidString(s)) {
			special = true
		}
		if isBreak(r) {
			lineBreaks = true
		}
		switch {
		case r == ' ':
			leadingSpace = leadingSpace || i == 0
			trailingSpace = trailingSpace || i == len(rs)-1
			breakSpace = breakSpace || prevBreak
			prevSpace, prevBreak = true, false
		case isBreak(r):
			leadingBreak = leadingBreak || i == 0
			trailingBreak = trailingBreak || i == len(rs)-1
			spaceBreak = spaceBreak || prevSpace
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		preceded = isBlankZ(r)
		followed = i+2 >= len(rs) || isBlankZ(rs[i+2])
	}
	a := scalarAnalysis{multiline: lineBreaks, flowPlain: true, blockPlain: true, singleQuoted: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.flowPlain, a.blockPlain = false, false
	}
	if breakSpace {
		a.flowPlain, a.blockPlain, a.singleQuoted = false, false, false
	}
	if spaceBreak || special {
		a.flowPlain, a.blockPlain, a.singleQuoted = false, false, false
	}
	if lineBreaks {
		a.flowPlain, a.blockPlain = false, false
	}
	if flowInd {
		a.flowPlain = false
	}
	if blockInd {
		a.blockPlain = false
	}
	return a
}

func (e *emitter) writeRune(r rune) {
	e.b.WriteRune(r)
	e.column++
}

// writeBreak writes a line break character as libyaml's WRITE_BREAK.
func (e *emitter) writeBreak(r rune) {
	if r == '\n' {
		e.putBreak()
		return
	}
	e.b.WriteRune(r)
	e.column = 0
}

func (e *emitter) writePlain(s string, allowBreaks bool) {
	if !e.whitespace && s != "" {
		e.b.WriteByte(' ')
		e.column++
	}
	rs := []rune(s)
	spaces := false
	for i, r := range rs {
		if r == ' ' {
			if allowBreaks && !spaces && e.column > bestWidth && (i+1 >= len(rs) || rs[i+1] != ' ') {
				e.writeIndent()
			} else {
				e.writeRune(r)
			}
			spaces = true
			continue
		}
		e.writeRune(r)
		e.indention = false
		spaces = false
	}
	e.whitespace = false
	e.indention = false
}

func (e *emitter) writeSingleQuoted(s string, allowBreaks bool) {
	e.writeIndicator("'", true, false, false)
	rs := []rune(s)
	spaces, breaks := false, false
	for i, r := range rs {
		switch {
		case r == ' ':
			if allowBreaks && !spaces && e.column > bestWidth && i != 0 && i != len(rs)-1 &&
				rs[i+1] != ' ' {
				e.writeIndent()
			} else {
				e.writeRune(r)
			}
			spaces = true
		case isBreak(r):
			if !breaks && r == '\n' {
				e.putBreak()
			}
			e.writeBreak(r)
			e.indention = true
			breaks = true
		default:
			if breaks {
				e.writeIndent()
			}
			if r == '\'' {
				e.writeRune('\'')
			}
			e.writeRune(r)
			e.indention = false
			spaces, breaks = false, false
		}
	}
	if breaks {
		e.writeIndent()
	}
	e.writeIndicator("'", false, false, false)
	e.whitespace = false
	e.indention = false
}

func (e *emitter) writeDoubleQuoted(s string, allowBreaks bool) {
	e.writeIndicator("\"", true, false, false)
	spaces := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			esc := fmt.Sprintf(`\x%02X`, s[i])
			e.b.WriteString(esc)
			e.column += len(esc)
			spaces = false
		case !isPrintable(r) || r == 0xFEFF || isBreak(r) || r == '"' || r == '\\':
			esc := escapeRune(r)
			e.b.WriteString(esc)
			e.column += len(esc)
			spaces = false
		case r == ' ':
			if allowBreaks && !spaces && e.column > bestWidth && i != 0 && i != len(s)-1 {
				e.writeIndent()
				if i+1 < len(s) && s[i+1] == ' ' {
					e.writeRune('\\')
				}
			} else {
				e.writeRune(r)
			}
			spaces = true
		default:
			e.writeRune(r)
			spaces = false
		}
		i += size
	}
	e.writeIndicator("\"", false, false, false)
	e.whitespace = false
	e.indention = false
}

// escapeRune is the double-quoted escape libyaml and PyYAML write.
func escapeRune(r rune) string {
	switch r {
	case 0:
		return `\0`
	case 0x07:
		return `\a`
	case 0x08:
		return `\b`
	case 0x09:
		return `\t`
	case 0x0A:
		return `\n`
	case 0x0B:
		return `\v`
	case 0x0C:
		return `\f`
	case 0x0D:
		return `\r`
	case 0x1B:
		return `\e`
	case '"':
		return `\"`
	case '\\':
		return `\\`
	case 0x85:
		return `\N`
	case 0xA0:
		return `\_`
	case 0x2028:
		return `\L`
	case 0x2029:
		return `\P`
	}
	switch {
	case r <= 0xFF:
		return fmt.Sprintf(`\x%02X`, r)
	case r <= 0xFFFF:
		return fmt.Sprintf(`\u%04X`, r)
	}
	return fmt.Sprintf(`\U%08X`, r)
}
