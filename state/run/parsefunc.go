package run

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// parseFunction is salt/utils/args.py parse_function: the name and the
// positional and keyword arguments of "mod.fun(a, 'b c', k=v)", every
// argument the concatenation of its tokens (so unquoted spaces vanish),
// brackets kept balanced inside an argument. ok is false for anything
// that is not a complete call.
func parseFunction(s string) (fun string, args []any, kwargs *ordered.Map, ok bool) {
	// salt/utils/args.py parse_function tokenizes with
	// shlex.shlex(s, posix=True) and escapedquotes "\"'".
	lex := py.NewLexer(true)
	lex.EscapedQuotes = `"'`
	tokens, err := lex.Tokens(s)
	if err != nil {
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
