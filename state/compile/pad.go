package compile

import (
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// PadFuncs turns the dotted function references of rendered high data
// into Salt's state form, as salt/state.py Compiler.pad_funcs does for
// the reactor: `id: mod.fun.name` becomes `id: {mod: [fun.name]}`, and
// a key `mod.fun.name: [args]` becomes `mod: [args..., fun.name]`.
// Unlike an SLS's state declarations (handleStateDecls), everything
// after the first dot is the function ("wheel.key.accept" is the wheel
// function key.accept). Keys are visited in sorted order, as Salt
// visits them, so of two declarations of one module the first sorted
// one is kept.
func PadFuncs(high *ordered.Map) {
	for _, name := range high.Keys() {
		switch body := high.Value(name).(type) {
		case string:
			if mod, fun, ok := strings.Cut(body, "."); ok {
				high.Set(name, ordered.FromPairs(mod, []any{fun}))
			}
		case *ordered.Map:
			padBody(body)
		}
	}
}

func padBody(body *ordered.Map) {
	var keys []string
	for _, k := range body.Keys() {
		if s, ok := k.(string); ok {
			keys = append(keys, s)
		}
	}
	sort.Strings(keys)
	seen := map[string]bool{}
	for _, key := range keys {
		if strings.HasPrefix(key, "_") {
			continue
		}
		args, ok := body.Value(key).([]any)
		if !ok {
			continue
		}
		mod, fun, dotted := strings.Cut(key, ".")
		if !dotted {
			seen[key] = true
			continue
		}
		if seen[mod] {
			continue
		}
		body.Delete(key)
		body.Set(mod, append(args, fun))
		seen[mod] = true
	}
}
