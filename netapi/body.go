package netapi

import (
	"bytes"
	"encoding/json"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// Body is a parsed request body: Data is hypermedia_in's
// unserialized_data, Raw the body as text (the webhook's "body").
type Body struct {
	Data any
	Raw  string
}

// ParseBody is rest_cherrypy's hypermedia_in (salt/netapi/rest_cherrypy/
// app.py): the processor for the request's media type turns b into data.
// A missing Content-Type is CherryPy's default, a form. An empty body is
// no data (nil), as CherryPy skips the processors for Content-Length 0.
func ParseBody(contentType string, b []byte) (Body, error) {
	if len(b) == 0 {
		return Body{}, nil
	}
	media := "application/x-www-form-urlencoded"
	if contentType != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		if err != nil {
			// CherryPy takes the part before the first ";".
			mt = strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
		}
		media = mt
	}
	raw := toUnicode(b)
	switch media {
	case "application/x-www-form-urlencoded":
		return Body{Data: ParseForm(raw), Raw: raw}, nil
	case "application/json":
		v, ok := parseJSON(b)
		if !ok {
			return Body{}, httpError(400, "Invalid JSON document")
		}
		return Body{Data: v, Raw: raw}, nil
	case "application/x-yaml", "text/yaml":
		v, err := saltyaml.Load(b, "<request body>")
		if err != nil {
			// Salt catches only ValueError here and lets PyYAML's
			// errors become a 500; the 400 says what is wrong.
			return Body{}, httpError(400, "Invalid YAML document")
		}
		return Body{Data: v, Raw: raw}, nil
	case "text/plain":
		// text_processor: JSON when it parses (a browser's fetch()
		// sends JSON as text/plain), else the text itself.
		if v, ok := parseJSON(b); ok {
			return Body{Data: v, Raw: raw}, nil
		}
		return Body{Data: raw, Raw: raw}, nil
	}
	return Body{}, httpError(406, "Content type not supported")
}

// toUnicode is salt.utils.stringutils.to_unicode for a body: UTF-8, with
// invalid bytes replaced rather than failing.
func toUnicode(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// parseJSON is json.loads: exactly one JSON value, objects kept in
// document order.
func parseJSON(b []byte) (any, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	v, err := ordered.DecodeJSON(bytes.NewReader(b))
	return v, err == nil
}

// ParseForm is urlencoded_processor: parse_qsl pairs (blank values
// dropped), a repeated key becomes a list, and "arg" (each value) and
// "kwarg" are read as the CLI reads them (yamlify_arg).
func ParseForm(s string) *ordered.Map {
	vals := ordered.New()
	for _, kv := range parseQSL(s) {
		if l, ok := vals.Value(kv[0]).([]any); ok {
			vals.Set(kv[0], append(l, kv[1]))
			continue
		}
		vals.Set(kv[0], []any{kv[1]})
	}
	vals.Range(func(k, v any) bool {
		if l := v.([]any); len(l) == 1 {
			vals.Set(k, l[0])
		}
		return true
	})
	if v, ok := vals.Get("kwarg"); ok {
		vals.Set("kwarg", yamlify(v))
	}
	if v, ok := vals.Get("arg"); ok {
		if l, isList := v.([]any); isList {
			for i := range l {
				l[i] = yamlify(l[i])
			}
		} else {
			vals.Set("arg", []any{yamlify(v)})
		}
	}
	return vals
}

// yamlify is salt.utils.args.yamlify_arg: strings only.
func yamlify(v any) any {
	if s, ok := v.(string); ok {
		return saltyaml.ParseCLIArg(s)
	}
	return v
}

// parseQSL is urllib.parse.parse_qsl(s) with its defaults: pairs split
// on "&", a pair without "=" or with an empty value dropped, "+" a
// space, percent escapes decoded (an invalid one kept as written).
func parseQSL(s string) [][2]string {
	var out [][2]string
	for _, pair := range strings.Split(s, "&") {
		if pair == "" {
			continue
		}
		name, value, ok := strings.Cut(pair, "=")
		if !ok || value == "" {
			continue
		}
		out = append(out, [2]string{unquotePlus(name), unquotePlus(value)})
	}
	return out
}

// unquotePlus is urllib.parse.unquote_plus: "+" as space, %XX decoded
// into bytes read as UTF-8 with replacement, a malformed escape kept.
func unquotePlus(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if !strings.Contains(s, "%") {
		return s
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return toUnicode(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
