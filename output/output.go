package output

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// Options are the display settings Salt's outputters read from opts.
type Options struct {
	// Color turns on ANSI colours (Salt: color, --no-color, --force-color).
	Color bool
	// Indent is --out-indent / output_indent; nil means unset, which is not
	// the same as 0 for json and yaml (salt/output/json_out.py). A negative
	// value stands for Python's None as well (output_indent: null): json on
	// one line, yaml in flow style.
	Indent *int
	// IndentPretty is output_indent: pretty (json: indent 4, sorted keys).
	IndentPretty bool
	// NestedIndent is nested_indent, the base indent of nested output.
	NestedIndent int
	// Retcode is the return code of the data; nested draws dict keys, list
	// markers and separators red when it is not 0 (nested.py _retcode).
	Retcode int
	// KeepEscapes keeps ESC characters in nested strings; Salt replaces
	// them with "?" unless strip_colors is False.
	KeepEscapes bool
	// Logger receives the fallback warning for unknown outputters.
	Logger *slog.Logger
	// Highstate configures the highstate outputter.
	Highstate HighstateOptions
}

// IndentOf returns a pointer to n, for Options.Indent.
func IndentOf(n int) *int { return &n }

// Func formats data; the text is trimmed of trailing whitespace by Write.
type Func func(data any, opts Options) (string, error)

// Registry maps outputter names (Salt's --out values) to formatters.
type Registry struct {
	mu  sync.RWMutex
	fns map[string]Func
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{fns: map[string]Func{}} }

// Register adds an outputter; a duplicate or empty name panics.
func (r *Registry) Register(name string, fn Func) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" || fn == nil {
		panic("output: Register with empty name or nil Func")
	}
	if _, dup := r.fns[name]; dup {
		panic(fmt.Sprintf("output: outputter %q registered twice", name))
	}
	r.fns[name] = fn
}

// Lookup returns the outputter registered under name, after Salt's
// aliases ("text" is txt, "" is nested).
func (r *Registry) Lookup(name string) (Func, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	fn, ok := r.fns[canonical(name)]
	return fn, ok
}

// Names lists the registered outputters, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.fns))
	for n := range r.fns {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func canonical(name string) string {
	switch name {
	case "":
		return "nested"
	case "text":
		return "txt"
	}
	return name
}

// Format returns the text for data, trimmed of trailing whitespace as
// salt/output/__init__.py try_printout does. An unknown name falls back
// to nested with a logged error, as Salt's get_printout does.
func (r *Registry) Format(name string, data any, opts Options) (string, error) {
	fn, ok := r.Lookup(name)
	if !ok {
		if opts.Logger != nil {
			opts.Logger.Error("invalid outputter, falling back to nested", "outputter", name)
		}
		if fn, ok = r.Lookup("nested"); !ok {
			return "", fmt.Errorf("format %s: no such outputter", name)
		}
	}
	s, err := fn(data, opts)
	if err != nil {
		return "", fmt.Errorf("format %s: %w", canonical(name), err)
	}
	return strings.TrimRightFunc(s, isPySpace), nil
}

// Write formats data and writes it with a final newline; empty output
// writes nothing (salt/output/__init__.py display_output).
func (r *Registry) Write(w io.Writer, name string, data any, opts Options) error {
	s, err := r.Format(name, data, opts)
	if err != nil {
		return err
	}
	if s == "" {
		return nil
	}
	_, err = io.WriteString(w, s+"\n")
	return err
}

var global = NewRegistry()

// Register adds an outputter to the global registry, from init().
func Register(name string, fn Func) { global.Register(name, fn) }

// Lookup finds a globally registered outputter.
func Lookup(name string) (Func, bool) { return global.Lookup(name) }

// Names lists the globally registered outputters.
func Names() []string { return global.Names() }

// Format formats data with a globally registered outputter.
func Format(name string, data any, opts Options) (string, error) {
	return global.Format(name, data, opts)
}

// Write writes data with a globally registered outputter.
func Write(w io.Writer, name string, data any, opts Options) error {
	return global.Write(w, name, data, opts)
}

// isPySpace is Python's str.isspace for rstrip().
func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0,
		0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}
