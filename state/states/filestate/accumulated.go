package filestate

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

var accumulatedSpec = spec(true, modules.Param{Name: "filename"}, modules.Param{Name: "text"})

// accumKey is where the job's accumulators live in Env.Context. Salt
// keeps them in a file under cachedir for the minion process; the job's
// __context__ gives them the same lifetime within a state run.
const accumKey = "file.accumulators"

// accumulators is Salt's (accumulators, accumulators_deps) pair:
// filename → accumulator name → text chunks, and → the state IDs its
// require_in/watch_in name.
type accumulators struct {
	data map[string]*ordered.Map
	deps map[string]map[string][]string
}

func loadAccumulators(env *modules.Env) *accumulators {
	if a, ok := env.Context[accumKey].(*accumulators); ok {
		return a
	}
	a := &accumulators{data: map[string]*ordered.Map{}, deps: map[string]map[string][]string{}}
	if env.Context != nil {
		env.Context[accumKey] = a
	}
	return a
}

// accumulated is file.accumulated: charge the accumulator name for
// filename with text, for the file.managed (context "accumulator") or
// file.blockreplace state it is required in.
func accumulated(_ context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, "")
	if name == "" {
		return fail(name, "Must provide name to file.accumulated"), nil
	}
	text := c.Arg("text")
	if text == nil {
		return fail(name, "No text supplied for accumulator"), nil
	}
	var deps []string
	fileDep := false
	for _, key := range []string{"require_in", "watch_in"} {
		l, _ := c.Low.Value(key).([]any)
		for _, d := range l {
			if m, ok := d.(*ordered.Map); ok {
				fileDep = fileDep || m.Has("file")
				m.Range(func(_, v any) bool { deps = append(deps, py.Str(v)); return true })
			} else {
				deps = append(deps, py.Str(d))
			}
		}
	}
	if !fileDep {
		return fail(name, fmt.Sprintf("Orphaned accumulator %s in %s:%s", name, py.Str(c.Low.Value("__sls__")), py.Str(c.Low.Value("__id__")))), nil
	}
	chunks, ok := text.([]any)
	if !ok {
		chunks = []any{text}
	}
	filename := c.Str("filename")
	acc := loadAccumulators(c.Env)
	if acc.data[filename] == nil {
		acc.data[filename] = ordered.New()
		acc.deps[filename] = map[string][]string{}
	}
	acc.deps[filename][name] = append(acc.deps[filename][name], deps...)
	have, _ := acc.data[filename].Value(name).([]any)
	for _, chunk := range chunks {
		if !containsValue(have, chunk) {
			have = append(have, chunk)
			r.Comment = fmt.Sprintf("Accumulator %s for file %s was charged by text", name, filename)
		}
	}
	acc.data[filename].Set(name, have)
	return r, nil
}

func containsValue(l []any, v any) bool {
	for _, x := range l {
		if ordered.Equal(x, v) {
			return true
		}
	}
	return false
}

// accumulatorContext is what file.managed adds to a template's context:
// the accumulators charged for name.
func accumulatorContext(env *modules.Env, name string) *ordered.Map {
	acc := loadAccumulators(env)
	return acc.data[name]
}

// accumulatorText is blockreplace's content from accumulators: those
// required in this state (by ID), else all charged for the file, one
// line per chunk.
func accumulatorText(c *states.Call, name, content string) string {
	acc := loadAccumulators(c.Env)
	data := acc.data[name]
	if data == nil {
		return content
	}
	id := py.Str(c.Low.Value("__id__"))
	var use []string
	for accName, ids := range acc.deps[name] {
		if data.Has(accName) && containsString(ids, id) {
			use = append(use, accName)
		}
	}
	if len(use) == 0 {
		use = data.StringKeys()
	} else {
		// keep the order the accumulators were charged in
		var ordered []string
		for _, k := range data.StringKeys() {
			if containsString(use, k) {
				ordered = append(ordered, k)
			}
		}
		use = ordered
	}
	var lines []string
	if content != "" {
		lines = append(lines, content)
	}
	for _, k := range use {
		l, _ := data.Value(k).([]any)
		for _, x := range l {
			lines = append(lines, py.Str(x))
		}
	}
	return strings.Join(lines, "\n")
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
