package output

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/state/ordered"
)

func init() { Register("json", jsonFunc) }

// jsonFunc is salt/output/json_out.py: json.dumps with ensure_ascii off,
// indent 4 and keys in their own order when output_indent is unset;
// "pretty" sorts keys; a negative indent puts everything on one line.
// Sorting keys of mixed types fails in Python, and Salt then prints {}.
func jsonFunc(data any, opts Options) (string, error) {
	indent, sortKeys := 4, false
	switch {
	case opts.IndentPretty:
		sortKeys = true
	case opts.Indent != nil:
		indent = *opts.Indent
	}
	s, err := PyJSON(data, indent, sortKeys)
	if errors.Is(err, errUnsortable) {
		return "{}", nil
	}
	return s, err
}

var errUnsortable = errors.New("keys of mixed types cannot be sorted")

// PyJSON returns Python's json.dumps(v, indent=indent, sort_keys=sortKeys,
// ensure_ascii=False): a negative indent means indent=None (one line,
// ", " and ": " separators); floats as float.__repr__, NaN and Infinity
// bare; only ", \, and control characters escaped.
func PyJSON(v any, indent int, sortKeys bool) (string, error) {
	e := pyJSONEncoder{indent: indent, sort: sortKeys}
	if err := e.encode(v, 0); err != nil {
		return "", err
	}
	return e.b.String(), nil
}

type pyJSONEncoder struct {
	b      strings.Builder
	indent int
	sort   bool
}

func (e *pyJSONEncoder) newline(level int) {
	if e.indent < 0 {
		return
	}
	e.b.WriteByte('\n')
	e.b.WriteString(strings.Repeat(" ", e.indent*level))
}

func (e *pyJSONEncoder) sep() {
	if e.indent < 0 {
		e.b.WriteString(", ")
	} else {
		e.b.WriteByte(',')
	}
}

func (e *pyJSONEncoder) encode(v any, level int) error {
	switch x := v.(type) {
	case nil:
		e.b.WriteString("null")
	case bool:
		e.b.WriteString(strconv.FormatBool(x))
	case int:
		e.b.WriteString(strconv.Itoa(x))
	case int64:
		e.b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		e.b.WriteString(jsonFloat(x))
	case string:
		e.b.WriteString(ordered.QuoteJSON(x, false))
	case []any:
		if len(x) == 0 {
			e.b.WriteString("[]")
			return nil
		}
		e.b.WriteByte('[')
		for i, el := range x {
			if i > 0 {
				e.sep()
			}
			e.newline(level + 1)
			if err := e.encode(el, level+1); err != nil {
				return err
			}
		}
		e.newline(level)
		e.b.WriteByte(']')
	case *ordered.Map:
		return e.object(x, level)
	default:
		// json.dumps(default=repr): anything else becomes its repr string.
		e.b.WriteString(ordered.QuoteJSON(Repr(x), false))
	}
	return nil
}

func (e *pyJSONEncoder) object(m *ordered.Map, level int) error {
	if m.Len() == 0 {
		e.b.WriteString("{}")
		return nil
	}
	var entries []pyEntry
	if e.sort {
		entries = sortedEntries(m, false)
		if !comparableKeys(entries) {
			return errUnsortable
		}
	} else {
		m.Range(func(k, v any) bool { entries = append(entries, pyEntry{k, v}); return true })
	}
	e.b.WriteByte('{')
	for i, en := range entries {
		if i > 0 {
			e.sep()
		}
		e.newline(level + 1)
		e.b.WriteString(ordered.QuoteJSON(jsonKey(en.key), false))
		e.b.WriteString(": ")
		if err := e.encode(en.val, level+1); err != nil {
			return err
		}
	}
	e.newline(level)
	e.b.WriteByte('}')
	return nil
}

// jsonKey converts a key as json.dumps does: True is "true", None "null".
func jsonKey(k any) string {
	switch x := k.(type) {
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	case float64:
		return jsonFloat(x)
	}
	return ordered.KeyString(k)
}

func jsonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return ordered.FormatFloat(f)
}
