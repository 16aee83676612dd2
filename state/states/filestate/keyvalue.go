package filestate

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/states"
)

var keyvalueSpec = spec(false, opt("key", nil), opt("value", nil), opt("key_values", nil),
	opt("separator", "="), opt("append_if_not_found", false), opt("prepend_if_not_found", false),
	opt("search_only", false), opt("show_changes", true), opt("ignore_if_missing", false),
	opt("count", 1), opt("uncomment", nil), opt("key_ignore_case", false), opt("value_ignore_case", false))

// lstripChars is str.lstrip(chars); nil chars strips whitespace.
func lstripChars(s string, chars any) string {
	if chars == nil {
		return strings.TrimLeft(s, " \t\n\r\v\f")
	}
	return strings.TrimLeft(s, py.Str(chars))
}

type kvEdit struct {
	c         *states.Call
	keys      []string
	values    map[string]any
	count     map[string]int
	sep       string
	diff      []string
	content   []string
	changes   int
	keyCase   bool
	valueCase bool
}

// keyvalue is file.keyvalue.
func keyvalue(_ context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.None, "")
	if name == "" {
		return fail(name, "Must provide name to file.keyvalue"), nil
	}
	e := &kvEdit{c: c, values: map[string]any{}, count: map[string]int{}, sep: c.Str("separator"),
		keyCase: c.Bool("key_ignore_case"), valueCase: c.Bool("value_ignore_case")}
	kv, isMap := c.Arg("key_values").(*ordered.Map)
	switch {
	case c.Arg("key") != nil && c.Arg("value") != nil:
		if isMap {
			return fail(name, "file.keyvalue can not combine key_values with key and value"), nil
		}
		kv = ordered.FromPairs(py.Str(c.Arg("key")), c.Arg("value"))
	case !isMap || kv.Len() == 0:
		msg := "is not a dictionary"
		if isMap || c.Arg("key_values") == nil {
			msg = "is empty"
		}
		return fail(name, "file.keyvalue key and value not supplied and key_values "+msg), nil
	}
	count, _ := c.Arg("count").(int)
	kv.Range(func(k, v any) bool {
		ks := py.Str(k)
		e.keys = append(e.keys, ks)
		e.values[ks], e.count[ks] = v, count
		return true
	})
	raw, err := os.ReadFile(name)
	if err != nil {
		r.Comment = fmt.Sprintf("unable to open %s", name)
		r.Result = states.TriOf(c.Bool("ignore_if_missing"))
		return r, nil
	}
	for _, l := range strings.SplitAfter(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n") {
		if l != "" {
			e.line(l)
		}
	}
	e.notFound()
	if e.changes == 0 {
		r.Result = states.True
		return r, nil
	}
	if c.Env.Test {
		r.Comment = fmt.Sprintf("File %s is set to be changed (%d lines)", name, e.changes)
		if c.Bool("show_changes") {
			r.Changes.Set("diff", strings.Join(e.diff, ""))
			r.Comment += "\nPredicted diff:\n\r\t\t" + strings.Join(e.diff, "\r\t\t")
		}
		return r, nil
	}
	r.Comment = fmt.Sprintf("Changed %d lines", e.changes)
	if c.Bool("show_changes") {
		r.Changes.Set("diff", strings.Join(e.diff, ""))
	}
	if err := os.WriteFile(name, []byte(strings.Join(e.content, "")), 0o644); err != nil {
		r.Result, r.Comment = states.False, fmt.Sprintf("%s not writable", name)
		return r, nil
	}
	r.Result = states.True
	return r, nil
}

func (e *kvEdit) fmtLine(key, sep string, v any) string { return key + sep + py.Str(v) + "\n" }

// line is keyvalue's loop body for one line of the file.
func (e *kvEdit) line(l string) {
	uncomment := e.c.Arg("uncomment")
	test := lstripChars(l, uncomment)
	didUncomment := len(l) > len(test)
	if e.keyCase {
		test = strings.ToLower(test)
	}
	for _, key := range e.keys {
		testKey := key
		if e.keyCase {
			testKey = strings.ToLower(key)
		}
		if !strings.HasPrefix(test, testKey) {
			continue
		}
		working := l
		if didUncomment {
			working = lstripChars(l, uncomment)
		}
		lineKey, lineValue, ok := strings.Cut(working, e.sep)
		if !ok {
			continue
		}
		if lineKey != testKey && !(e.keyCase && strings.ToLower(lineKey) == testKey) {
			continue
		}
		value := e.values[key]
		lv, tv := strings.TrimSpace(lineValue), strings.TrimSpace(py.Str(value))
		if e.valueCase {
			lv, tv = strings.ToLower(lv), strings.ToLower(tv)
		}
		match, change := lv == tv, false
		if didUncomment {
			if e.count[key] > 0 {
				change = true
			} else if !match {
				match = true
			}
		} else if e.count[key] == 0 {
			change = true
		}
		if !match || change {
			e.diff = append(e.diff, "- "+l)
			l = ""
			if e.count[key] != 0 {
				l = e.fmtLine(lineKey, e.sep, value)
				if _, isStr := value.(string); !isStr {
					e.diff = append(e.diff, fmt.Sprintf("+ %s (from %s type)\n", strings.TrimRight(l, " \t\r\n"), py.TypeName(value)))
				} else {
					e.diff = append(e.diff, "+ "+l)
				}
			}
			e.changes++
		}
		if e.count[key] > 0 {
			e.count[key]--
		}
	}
	e.content = append(e.content, l)
}

// notFound adds the keys never seen, for append/prepend_if_not_found.
func (e *kvEdit) notFound() {
	switch {
	case e.c.Bool("append_if_not_found"):
		var tmp []string
		for _, key := range e.keys {
			if e.count[key] > 0 {
				l := e.fmtLine(key, e.sep, e.values[key])
				tmp = append(tmp, "+ "+l)
				e.content = append(e.content, l)
				e.changes++
			}
		}
		if len(tmp) > 0 {
			e.diff = append(e.diff, "- <EOF>\n")
			e.diff = append(e.diff, tmp...)
			e.diff = append(e.diff, "+ <EOF>\n")
		}
	case e.c.Bool("prepend_if_not_found"):
		did := false
		for _, key := range e.keys {
			if e.count[key] > 0 {
				l := e.fmtLine(key, e.sep, e.values[key])
				if !did {
					e.diff = append([]string{"  <SOF>\n"}, e.diff...)
					did = true
				}
				e.diff = append(e.diff[:1], append([]string{"+ " + l}, e.diff[1:]...)...)
				e.content = append([]string{l}, e.content...)
				e.changes++
			}
		}
	}
}
