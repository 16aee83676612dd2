package output

import (
	"errors"

	"github.com/brinesalt/brine/internal/py"
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
	s, err := py.JSON(data, py.JSONOptions{Indent: indent, SortKeys: sortKeys})
	if errors.Is(err, py.ErrUnsortable) {
		return "{}", nil
	}
	return s, err
}
