package run

import (
	"strings"

	"github.com/brinesalt/brine/state/ordered"
)

// shlexWordChars are Python shlex's wordchars in posix mode.
const shlexWordChars = "abcdfeghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_" +
	"ßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞ"

// shlexTokens splits s as Python's shlex.shlex(s, posix=True) with
// escapedquotes "\"'" does (the tokenizer of salt/utils/args.py
// parse_function): words of word characters, quoted parts joined to the
// word they touch with the quotes removed, backslash escapes, comments
// from '#', and every other character a token of its own. ok is false
// for an unclosed quote or a trailing backslash.
func shlexTokens(s string) (tokens []string, ok bool) {
	var tok strings.Builder
	inTok := false // a token has started (it may be an empty quoted one)
	emit := func() {
		if inTok {
			tokens = append(tokens, tok.String())
		}
		tok.Reset()
		inTok = false
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			emit()
		case c == '#':
			emit()
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case c == '\\':
			if i+1 >= len(rs) {
				return nil, false
			}
			i++
			tok.WriteRune(rs[i])
			inTok = true
		case c == '"' || c == '\'':
			inTok = true
			for i++; ; i++ {
				if i >= len(rs) {
					return nil, false
				}
				if rs[i] == c {
					break
				}
				if rs[i] == '\\' && i+1 < len(rs) {
					// Inside quotes a backslash escapes only the quote
					// or itself; otherwise it stays.
					if n := rs[i+1]; n == c || n == '\\' {
						i++
						tok.WriteRune(n)
						continue
					}
				}
				tok.WriteRune(rs[i])
			}
		case strings.ContainsRune(shlexWordChars, c):
			tok.WriteRune(c)
			inTok = true
		default:
			emit()
			tokens = append(tokens, string(c))
		}
	}
	emit()
	return tokens, true
}

// parseFunction is salt/utils/args.py parse_function: the name and the
// positional and keyword arguments of "mod.fun(a, 'b c', k=v)", every
// argument the concatenation of its tokens (so unquoted spaces vanish),
// brackets kept balanced inside an argument. ok is false for anything
// that is not a complete call.
func parseFunction(s string) (fun string, args []any, kwargs *ordered.Map, ok bool) {
	tokens, ok := shlexTokens(s)
	if !ok {
		return "", nil, nil, false
	}
	i := 0
	var name strings.Builder
	for ; i < len(tokens) && tokens[i] != "("; i++ {
		name.WriteString(tokens[i])
	}
	if name.Len() == 0 || i >= len(tokens) {
		return "", nil, nil, false
	}
	kwargs = ordered.New()
	var word strings.Builder
	var brackets []string
	key, hasKey, hasWord := "", false, false
	closing := map[string]string{"[": "]", "{": "}", "(": ")"}
	for i++; i < len(tokens); i++ {
		t := tokens[i]
		switch {
		case t == "[" || t == "{" || t == "(":
			word.WriteString(t)
			hasWord = true
			brackets = append(brackets, t)
		case (t == "," || t == ")") && len(brackets) == 0:
			switch {
			case hasKey:
				kwargs.Set(key, word.String())
			case hasWord:
				args = append(args, word.String())
			}
			if t == ")" {
				return name.String(), args, kwargs, true
			}
			key, hasKey, hasWord = "", false, false
			word.Reset()
		case t == "]" || t == "}" || t == ")":
			if len(brackets) == 0 || closing[brackets[len(brackets)-1]] != t {
				return "", nil, nil, false
			}
			brackets = brackets[:len(brackets)-1]
			word.WriteString(t)
		case t == "=" && len(brackets) == 0:
			key, hasKey = word.String(), true
			word.Reset()
			hasWord = false
		default:
			word.WriteString(t)
			hasWord = true
		}
	}
	return "", nil, nil, false
}
