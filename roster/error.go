package roster

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-multierror"
)

// Error is one problem in a roster: where it is and what is wrong. A
// roster that fails to load returns all of them at once, joined in a
// *multierror.Error; errors.As finds the first.
type Error struct {
	File   string // roster file; "" for roster_defaults from the master config
	Line   int    // 1-based; 0 when unknown
	Target string // target ID; "" for file-level problems
	Msg    string
	Err    error // underlying render or parse error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("roster ")
	switch {
	case e.File == "":
		b.WriteString("roster_defaults")
	case e.Line > 0:
		fmt.Fprintf(&b, "%s:%d", e.File, e.Line)
	default:
		b.WriteString(e.File)
	}
	if e.Target != "" {
		fmt.Fprintf(&b, ": target %q", e.Target)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrUnknownBackend is returned by Open for a backend name nobody
// registered.
var ErrUnknownBackend = errors.New("unknown roster backend")

// ErrUnsupportedTargetType is returned by Targets for a tgt_type the
// backend cannot match (Salt returns no targets silently; Brine says why).
var ErrUnsupportedTargetType = errors.New("unsupported target type")

// Errors returns every *Error inside err (a single *Error or a
// multierror of them).
func Errors(err error) []*Error {
	var out []*Error
	var me *multierror.Error
	if errors.As(err, &me) {
		for _, e := range me.Errors {
			var re *Error
			if errors.As(e, &re) {
				out = append(out, re)
			}
		}
		return out
	}
	var re *Error
	if errors.As(err, &re) {
		out = append(out, re)
	}
	return out
}
