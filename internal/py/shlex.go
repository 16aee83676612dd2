package py

import (
	"errors"
	"strings"
)

// The errors of Python's shlex, with its words (Salt shows them as they
// are).
var (
	//lint:ignore ST1005 Python's exact message, which Salt prints
	ErrNoClosingQuotation = errors.New("No closing quotation")
	//lint:ignore ST1005 Python's exact message, which Salt prints
	ErrNoEscapedCharacter = errors.New("No escaped character")
)

// Word characters of Python's shlex; in POSIX mode the Latin-1 letters
// are word characters too.
const (
	shlexWordChars      = "abcdfeghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
	shlexPosixWordChars = "ßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞ"
	shlexWhitespace     = " \t\r\n"
)

// Lexer is Python's shlex.shlex, with its attributes as fields. Make one
// with NewLexer, which sets Python's defaults, then change what the
// caller's Python code changes.
type Lexer struct {
	Posix           bool   // posix=
	WhitespaceSplit bool   // whitespace_split
	Commenters      string // commenters
	WordChars       string // wordchars
	Quotes          string // quotes
	Escape          string // escape
	EscapedQuotes   string // escapedquotes
}

// NewLexer returns shlex.shlex(posix=posix) as Python sets it up.
func NewLexer(posix bool) *Lexer {
	l := &Lexer{Posix: posix, Commenters: "#", WordChars: shlexWordChars,
		Quotes: `'"`, Escape: `\`, EscapedQuotes: `"`}
	if posix {
		l.WordChars += shlexPosixWordChars
	}
	return l
}

// Split is shlex.split(s): POSIX mode, words split at whitespace only,
// no comments.
func Split(s string) ([]string, error) {
	l := NewLexer(true)
	l.WhitespaceSplit = true
	l.Commenters = ""
	return l.Tokens(s)
}

// SplitNonPosix is shlex.split(s, posix=False): quotes stay in the words
// and backslashes are ordinary characters.
func SplitNonPosix(s string) ([]string, error) {
	l := NewLexer(false)
	l.WhitespaceSplit = true
	l.Commenters = ""
	return l.Tokens(s)
}

// Tokens is list(lexer) over s: every token until the end, or the
// error Python raises for an unclosed quote or a trailing escape.
func (l *Lexer) Tokens(s string) ([]string, error) {
	st := lexState{l: l, in: []rune(s), state: ' '}
	var out []string
	for {
		tok, ok, err := st.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, tok)
	}
}

// lexState is one pass of shlex over its input.
type lexState struct {
	l        *Lexer
	in       []rune
	pos      int
	state    rune // ' ' between tokens, 'a' in a word, a quote or escape char, eof
	pushback []string
}

const eof = -1

func (s *lexState) read() rune {
	if s.pos >= len(s.in) {
		return eof
	}
	r := s.in[s.pos]
	s.pos++
	return r
}

// skipLine is instream.readline(): the rest of the line, newline included.
func (s *lexState) skipLine() {
	for s.pos < len(s.in) {
		r := s.in[s.pos]
		s.pos++
		if r == '\n' {
			return
		}
	}
}

func in(set string, r rune) bool { return r != eof && strings.ContainsRune(set, r) }

// next is shlex.get_token: a pushed-back character first, then
// read_token. ok is false at the end (Python's eof token).
func (s *lexState) next() (tok string, ok bool, err error) {
	if n := len(s.pushback); n > 0 {
		tok, s.pushback = s.pushback[0], s.pushback[1:]
		return tok, true, nil
	}
	tok, quoted, err := s.readToken()
	if err != nil {
		return "", false, err
	}
	if s.l.Posix {
		// POSIX mode's eof is None: an empty token that was not quoted.
		return tok, tok != "" || quoted, nil
	}
	return tok, tok != "", nil
}

// readToken is shlex.read_token, state for state.
func (s *lexState) readToken() (string, bool, error) {
	l := s.l
	var token strings.Builder
	quoted := false
	escaped := rune(' ') // escapedstate
	emit := func() bool { return token.Len() > 0 || (l.Posix && quoted) }
	for {
		c := s.read()
		switch {
		case s.state == eof:
			return "", false, nil
		case s.state == ' ':
			switch {
			case c == eof:
				s.state = eof
				return token.String(), quoted, nil
			case in(shlexWhitespace, c):
				if emit() {
					return token.String(), quoted, nil
				}
			case in(l.Commenters, c):
				s.skipLine()
			case l.Posix && in(l.Escape, c):
				escaped, s.state = 'a', c
			case in(l.WordChars, c):
				token.WriteRune(c)
				s.state = 'a'
			case in(l.Quotes, c):
				if !l.Posix {
					token.WriteRune(c)
				}
				s.state = c
			case l.WhitespaceSplit:
				token.WriteRune(c)
				s.state = 'a'
			default:
				token.WriteRune(c)
				return token.String(), quoted, nil
			}
		case in(l.Quotes, s.state):
			quoted = true
			switch {
			case c == eof:
				return "", false, ErrNoClosingQuotation
			case c == s.state:
				if !l.Posix {
					token.WriteRune(c)
					s.state = ' '
					return token.String(), quoted, nil
				}
				s.state = 'a'
			case l.Posix && in(l.Escape, c) && in(l.EscapedQuotes, s.state):
				escaped, s.state = s.state, c
			default:
				token.WriteRune(c)
			}
		case in(l.Escape, s.state):
			if c == eof {
				return "", false, ErrNoEscapedCharacter
			}
			// In POSIX shells only the quote itself or the escape
			// character may be escaped within quotes.
			if in(l.Quotes, escaped) && c != s.state && c != escaped {
				token.WriteRune(s.state)
			}
			token.WriteRune(c)
			s.state = escaped
		case s.state == 'a':
			switch {
			case c == eof:
				s.state = eof
				return token.String(), quoted, nil
			case in(shlexWhitespace, c):
				s.state = ' '
				if emit() {
					return token.String(), quoted, nil
				}
			case in(l.Commenters, c):
				s.skipLine()
				if l.Posix {
					s.state = ' '
					if emit() {
						return token.String(), quoted, nil
					}
				}
			case l.Posix && in(l.Quotes, c):
				s.state = c
			case l.Posix && in(l.Escape, c):
				escaped, s.state = 'a', c
			case in(l.WordChars, c) || in(l.Quotes, c) || l.WhitespaceSplit:
				token.WriteRune(c)
			default:
				s.pushback = append(s.pushback, string(c))
				s.state = ' '
				if emit() {
					return token.String(), quoted, nil
				}
			}
		}
	}
}

// Quote is shlex.quote: s as it is when it holds only ASCII word
// characters and @%+=:,./-, ” when empty, otherwise in single quotes
// with each single quote written as '"'"'.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	for _, c := range s {
		if !isQuoteSafe(c) {
			return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
		}
	}
	return s
}

func isQuoteSafe(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.ContainsRune("_@%+=:,./-", c)
}
