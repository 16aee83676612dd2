package netapi

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// Lowstate is lowdata_fmt and the first checks of exec_lowstate
// (salt/netapi/rest_cherrypy/app.py): a single non-empty mapping is
// wrapped in a list; anything else that is not a list is 400 "Lowstates
// must be a list". Each chunk must be a mapping (Salt fails on anything
// else with its 500), its "arg" becomes a list when it is not one, and
// a "token" must be hex (401 "Invalid token").
func Lowstate(data any) ([]*ordered.Map, error) {
	var items []any
	switch d := data.(type) {
	case *ordered.Map:
		if d.Len() == 0 {
			return nil, httpError(400, "Lowstates must be a list")
		}
		items = []any{d}
	case []any:
		items = d
	default:
		return nil, httpError(400, "Lowstates must be a list")
	}
	out := make([]*ordered.Map, 0, len(items))
	for _, it := range items {
		chunk, ok := it.(*ordered.Map)
		if !ok {
			return nil, errNotAMapping
		}
		out = append(out, chunk)
	}
	return out, nil
}

// prepareChunk is exec_lowstate's per-chunk work: the session's token
// (when there is one) replaces the chunk's, the token must be hex, the
// endpoint's client is forced, and "arg" becomes a list.
func prepareChunk(chunk *ordered.Map, token, client string) error {
	if token != "" {
		chunk.Set("token", token)
	}
	if v, ok := chunk.Get("token"); ok {
		s, isStr := v.(string)
		if !isStr || !isPyHex(s) {
			return httpError(401, "Invalid token")
		}
	}
	if client != "" {
		chunk.Set("client", client)
	}
	if v, ok := chunk.Get("arg"); ok {
		if _, isList := v.([]any); !isList {
			chunk.Set("arg", []any{v})
		}
	}
	return nil
}

// isPyHex reports whether int(s, 16) succeeds in Python: optional
// surrounding whitespace and sign, an optional 0x prefix, hex digits
// with single underscores between them.
func isPyHex(s string) bool {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s[:min(len(s), 1)], "+-") + s[min(len(s), 1):]
	if low := strings.ToLower(s); strings.HasPrefix(low, "0x") {
		s = s[2:]
		s = strings.TrimPrefix(s, "_")
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '_' && !isHex(s[i]) {
			return false
		}
	}
	return true
}
