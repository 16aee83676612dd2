package jinja

import (
	"regexp"
	"strings"
	"unicode"
)

// tokKind classifies lexer tokens.
type tokKind int

const (
	tEOF tokKind = iota
	tData
	tVarBegin
	tVarEnd
	tBlockBegin
	tBlockEnd
	tName
	tString
	tInt
	tFloat
	tOp
)

type token struct {
	kind tokKind
	val  string
	line int
}

// lexOptions are the Jinja2 Environment settings that change lexing.
type lexOptions struct {
	trimBlocks   bool
	lstripBlocks bool
}

type lexer struct {
	src  string
	pos  int
	line int
	opts lexOptions
	toks []token
	// lstripNext is set by a "-%}" style end: strip leading whitespace of
	// the next data token.
	lstripNext bool
	trimNext   bool
}

var rawEndRe = regexp.MustCompile(`\{%(-|\+)?\s*endraw\s*(-?)%\}`)

// ops is ordered longest first so that "**" wins over "*".
var ops = []string{"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">", "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", ";"}

// lex tokenizes a template the way jinja2.lexer does with Salt's
// environment (default delimiters, no line statements).
func lex(src string, opts lexOptions) ([]token, error) {
	l := &lexer{src: src, line: 1, opts: opts}
	if err := l.run(); err != nil {
		return nil, err
	}
	// Jinja's token stream gives EOF the line of the last real token.
	eofLine := 1
	if n := len(l.toks); n > 0 {
		eofLine = l.toks[n-1].line
	}
	l.toks = append(l.toks, token{kind: tEOF, line: eofLine})
	return l.toks, nil
}

func (l *lexer) emitData(text string) {
	if l.lstripNext {
		text = strings.TrimLeftFunc(text, unicode.IsSpace)
		l.lstripNext = false
	}
	if l.trimNext {
		if strings.HasPrefix(text, "\r\n") {
			text = text[2:]
		} else if strings.HasPrefix(text, "\n") || strings.HasPrefix(text, "\r") {
			text = text[1:]
		}
		l.trimNext = false
	}
	if text != "" {
		l.toks = append(l.toks, token{kind: tData, val: normalizeNewlines(text), line: l.line})
	}
}

// normalizeNewlines applies Jinja's newline_sequence ("\n") to template
// data.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func (l *lexer) advance(n int) {
	l.line += strings.Count(l.src[l.pos:l.pos+n], "\n")
	l.pos += n
}

// nextTag finds the next "{{", "{%" or "{#" at or after pos.
func (l *lexer) nextTag() int {
	i := l.pos
	for {
		j := strings.IndexByte(l.src[i:], '{')
		if j < 0 {
			return -1
		}
		i += j
		if i+1 < len(l.src) {
			switch l.src[i+1] {
			case '{', '%', '#':
				return i
			}
		}
		i++
	}
}

func (l *lexer) run() error {
	for l.pos < len(l.src) {
		start := l.nextTag()
		if start < 0 {
			l.emitData(l.src[l.pos:])
			l.advance(len(l.src) - l.pos)
			return nil
		}
		kind := l.src[start+1]
		data := l.src[l.pos:start]
		modifier := byte(0)
		if start+2 < len(l.src) && (l.src[start+2] == '-' || l.src[start+2] == '+') {
			modifier = l.src[start+2]
		}
		switch {
		case modifier == '-':
			data = strings.TrimRightFunc(data, unicode.IsSpace)
		case modifier != '+' && kind != '{' && l.opts.lstripBlocks:
			data = lstripLine(data, l.pos == 0 || l.src[l.pos-1] == '\n')
		}
		dataLine := l.line
		l.emitDataAt(data, dataLine)
		l.advance(start - l.pos)
		skip := 2
		if modifier != 0 {
			skip = 3
		}
		var err error
		switch kind {
		case '#':
			err = l.comment(skip)
		case '{':
			err = l.inside(skip, tVarBegin, tVarEnd, "}}")
		case '%':
			if l.isRaw(skip) {
				err = l.raw()
			} else {
				err = l.inside(skip, tBlockBegin, tBlockEnd, "%}")
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *lexer) emitDataAt(text string, line int) {
	save := l.line
	l.line = line
	l.emitData(text)
	l.line = save
}

// lstripLine removes spaces and tabs between the last newline of data and
// a block tag, as lstrip_blocks does, but only when the tag starts a line.
func lstripLine(data string, lineStart bool) string {
	i := strings.LastIndexAny(data, "\n")
	if i < 0 && !lineStart {
		return data
	}
	tail := data[i+1:]
	if strings.Trim(tail, " \t") != "" {
		return data
	}
	return data[:i+1]
}

func (l *lexer) comment(skip int) error {
	startLine := l.line
	end := strings.Index(l.src[l.pos+skip:], "#}")
	if end < 0 {
		return syntaxErr(startLine, "Missing end of comment tag")
	}
	end += l.pos + skip
	stripAfter := end > l.pos+skip-1 && l.src[end-1] == '-' && end-1 >= l.pos+skip
	l.advance(end + 2 - l.pos)
	l.lstripNext = stripAfter
	l.trimNext = !stripAfter && l.opts.trimBlocks
	return nil
}

func (l *lexer) isRaw(skip int) bool {
	rest := l.src[l.pos+skip:]
	t := strings.TrimLeft(rest, " \t\r\n")
	if !strings.HasPrefix(t, "raw") {
		return false
	}
	t = strings.TrimLeft(t[3:], " \t\r\n")
	return strings.HasPrefix(t, "%}") || strings.HasPrefix(t, "-%}")
}

func (l *lexer) raw() error {
	startLine := l.line
	open := strings.Index(l.src[l.pos:], "%}")
	stripAfter := l.src[l.pos+open-1] == '-'
	l.advance(open + 2)
	m := rawEndRe.FindStringSubmatchIndex(l.src[l.pos:])
	if m == nil {
		return syntaxErr(startLine, "Missing end of raw directive")
	}
	body := l.src[l.pos : l.pos+m[0]]
	if stripAfter {
		body = strings.TrimLeftFunc(body, unicode.IsSpace)
	}
	if m[2] >= 0 && l.src[l.pos+m[2]] == '-' {
		body = strings.TrimRightFunc(body, unicode.IsSpace)
	} else if m[2] < 0 && l.opts.lstripBlocks {
		body = lstripLine(body, false)
	}
	if body != "" {
		l.toks = append(l.toks, token{kind: tData, val: normalizeNewlines(body), line: l.line})
	}
	endStrip := m[5] > m[4]
	l.advance(m[1])
	l.lstripNext = endStrip
	l.trimNext = !endStrip && l.opts.trimBlocks
	return nil
}

// inside lexes the expression tokens of a {{ }} or {% %} tag.
func (l *lexer) inside(skip int, begin, end tokKind, closer string) error {
	startLine := l.line
	l.toks = append(l.toks, token{kind: begin, line: l.line})
	l.advance(skip)
	var balance []string
	for {
		l.skipSpace()
		if l.pos >= len(l.src) {
			what := "print"
			if begin == tBlockBegin {
				what = "block"
			}
			return syntaxErr(startLine, "unexpected end of template, expected 'end of %s statement'.", what)
		}
		rest := l.src[l.pos:]
		if len(balance) == 0 {
			if strings.HasPrefix(rest, "-"+closer) {
				l.toks = append(l.toks, token{kind: end, line: l.line})
				l.advance(3)
				l.lstripNext = true
				return nil
			}
			if strings.HasPrefix(rest, closer) {
				l.toks = append(l.toks, token{kind: end, line: l.line})
				l.advance(2)
				l.trimNext = begin == tBlockBegin && l.opts.trimBlocks
				return nil
			}
		}
		c := rest[0]
		switch {
		case c == '\'' || c == '"':
			s, n, err := lexString(rest)
			if err != nil {
				return syntaxErr(l.line, "%s", err.msg)
			}
			l.toks = append(l.toks, token{kind: tString, val: s, line: l.line})
			l.advance(n)
		case c >= '0' && c <= '9':
			kind, n := lexNumber(rest)
			l.toks = append(l.toks, token{kind: kind, val: strings.ReplaceAll(rest[:n], "_", ""), line: l.line})
			l.advance(n)
		case c == '_' || unicode.IsLetter(rune(c)) || c >= 0x80:
			n := 0
			for _, r := range rest {
				if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
					n += len(string(r))
					continue
				}
				break
			}
			if n == 0 {
				return syntaxErr(l.line, "unexpected char %q at %d", rest[0], l.pos)
			}
			l.toks = append(l.toks, token{kind: tName, val: rest[:n], line: l.line})
			l.advance(n)
		default:
			op := ""
			for _, o := range ops {
				if strings.HasPrefix(rest, o) {
					op = o
					break
				}
			}
			if op == "" {
				return syntaxErr(l.line, "unexpected char %q at %d", rest[0], l.pos)
			}
			switch op {
			case "(":
				balance = append(balance, ")")
			case "[":
				balance = append(balance, "]")
			case "{":
				balance = append(balance, "}")
			case ")", "]", "}":
				if len(balance) == 0 {
					return syntaxErr(l.line, "unexpected '%s'", op)
				}
				want := balance[len(balance)-1]
				if want != op {
					return syntaxErr(l.line, "unexpected '%s', expected '%s'", op, want)
				}
				balance = balance[:len(balance)-1]
			}
			l.toks = append(l.toks, token{kind: tOp, val: op, line: l.line})
			l.advance(len(op))
		}
	}
}

func (l *lexer) skipSpace() {
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case ' ', '\t', '\r', '\n', '\f', '\v':
			l.advance(1)
		default:
			return
		}
	}
}

func lexNumber(s string) (tokKind, int) {
	i := 0
	digits := func() {
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '_' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9') {
			i++
		}
	}
	if len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'o' || s[1] == 'O' || s[1] == 'b' || s[1] == 'B') {
		i = 2
		for i < len(s) && (isHex(s[i]) || s[i] == '_') {
			i++
		}
		return tInt, i
	}
	digits()
	kind := tInt
	if i+1 < len(s) && s[i] == '.' && s[i+1] >= '0' && s[i+1] <= '9' {
		i++
		digits()
		kind = tFloat
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			i = j
			digits()
			kind = tFloat
		}
	}
	return kind, i
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// lexString reads a Python string literal (as Jinja's lexer does, with
// backslash escapes) and returns its value and length in the source.
func lexString(s string) (string, int, *tplError) {
	q := s[0]
	var b strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, nil
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			case '0', '1', '2', '3', '4', '5', '6', '7':
				// Octal escape of up to three digits.
				n, j := 0, i
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					n = n*8 + int(s[j]-'0')
					j++
				}
				b.WriteRune(rune(n))
				i = j - 1
			case 'a':
				b.WriteByte(7)
			case 'b':
				b.WriteByte(8)
			case 'f':
				b.WriteByte(12)
			case 'v':
				b.WriteByte(11)
			case '\n':
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if i+n < len(s) {
					if r, ok := parseHexRune(s[i+1 : i+1+n]); ok {
						b.WriteRune(r)
						i += n
						break
					}
				}
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, &tplError{kind: kindSyntax, msg: "unexpected end of string"}
}

func parseHexRune(h string) (rune, bool) {
	var r rune
	for i := 0; i < len(h); i++ {
		c := h[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(d)
	}
	return r, true
}
