package netapi

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// Media types a response can be rendered in, in Salt's order of
// preference (ct_out_map).
const (
	mediaJSON = "application/json"
	mediaYAML = "application/x-yaml"
)

var outMedia = []string{mediaJSON, mediaYAML}

// acceptElement is one media range of an Accept header (CherryPy's
// httputil.AcceptElement).
type acceptElement struct {
	value string
	str   string // str(element): value and ;k=v params, q included
	q     float64
}

// parseAccept is cherrypy's request.headers.elements("Accept"): the
// media ranges, most preferred first. CherryPy sorts them by q and, for
// equal q, by their text, both descending, so "application/json,
// application/x-yaml" prefers YAML; Brine keeps that order. A q that is
// not a number is CherryPy's 400.
func parseAccept(h string) ([]acceptElement, error) {
	var out []acceptElement
	for _, part := range splitOutsideQuotes(h) {
		el, err := parseAcceptElement(part)
		if err != nil {
			return nil, err
		}
		out = append(out, el)
	}
	slices.SortStableFunc(out, func(a, b acceptElement) int {
		if a.q != b.q {
			if a.q > b.q {
				return -1
			}
			return 1
		}
		return -strings.Compare(a.str, b.str)
	})
	return out, nil
}

// splitOutsideQuotes splits a header value at commas not inside double
// quotes.
func splitOutsideQuotes(h string) []string {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(h); i++ {
		switch h[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				parts = append(parts, h[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, h[start:])
}

var qSeparator = regexp.MustCompile(`; *q *=`)

// parseAcceptElement is AcceptElement.from_str.
func parseAcceptElement(s string) (acceptElement, error) {
	atoms := qSeparator.Split(s, 2)
	value, params := parseHeaderElement(strings.TrimSpace(atoms[0]))
	el := acceptElement{value: value, q: 1}
	qs := ""
	if len(atoms) > 1 {
		qv, qp := parseHeaderElement(strings.TrimSpace(atoms[1]))
		qs = qv + qp
		params += ";q=" + qs
		f, err := strconv.ParseFloat(strings.TrimSpace(qv), 64)
		if err != nil {
			return el, httpError(400, fmt.Sprintf("Malformed HTTP header: `%s%s`", value, params))
		}
		el.q = f
	}
	el.str = value + params
	return el, nil
}

// parseHeaderElement is HeaderElement.parse: the value and its params
// rendered back as ";k=v" (str(HeaderElement)).
func parseHeaderElement(s string) (string, string) {
	var atoms []string
	for _, a := range strings.Split(s, ";") {
		if a = strings.TrimSpace(a); a != "" {
			atoms = append(atoms, a)
		}
	}
	if len(atoms) == 0 {
		return "", ""
	}
	var params strings.Builder
	for _, a := range atoms[1:] {
		k, v, _ := strings.Cut(a, "=")
		fmt.Fprintf(&params, ";%s=%s", strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return atoms[0], params.String()
}

// accept is cherrypy.lib.cptools.accept: the first of media the Accept
// header allows, taking its ranges in order of preference; no header
// allows anything. None allowed is CherryPy's 406 with its message.
func accept(header string, present bool, media []string) (string, error) {
	if !present || strings.TrimSpace(header) == "" {
		return media[0], nil
	}
	els, err := parseAccept(header)
	if err != nil {
		return "", err
	}
	for _, el := range els {
		if el.q <= 0 {
			continue
		}
		switch {
		case el.value == "*/*":
			return media[0], nil
		case strings.HasSuffix(el.value, "/*"):
			prefix := strings.TrimSuffix(el.value, "*")
			for _, m := range media {
				if strings.HasPrefix(m, prefix) {
					return m, nil
				}
			}
		case slices.Contains(media, el.value):
			return el.value, nil
		}
	}
	msg := "Your client did not send an Accept header."
	if present {
		msg = "Your client sent this Accept header: " + header + "."
	}
	return "", httpError(406, msg+" But this resource only emits these media types: "+strings.Join(media, ", ")+".")
}

// render serializes a response body in media: json.dumps (ensure_ascii
// off, Salt's salt.utils.json.dumps) or safe_dump in block style.
func render(media string, v any) ([]byte, error) {
	if media == mediaYAML {
		s, err := saltyaml.Dump(v, saltyaml.DumpOptions{SortKeys: true})
		return []byte(s), err
	}
	s, err := py.JSON(v, py.JSONOptions{Indent: -1})
	return []byte(s), err
}
