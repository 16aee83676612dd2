package jinja

import (
	"fmt"
	"strings"
)

// Error is a template failure as Salt reports it (salt/utils/templates.py
// render_jinja_tmpl wrapping into SaltRenderError). Msg already carries
// Salt's prefix ("Jinja variable ...", "Jinja syntax error: ...",
// "Jinja error: ..."); Line is 1-based in the template named Name, or 0
// when unknown. Context holds Salt's source excerpt with the
// "    <======================" marker.
type Error struct {
	Name    string
	Line    int
	Msg     string
	Context string
	// err is the underlying cause (a Salt caller's error,
	// ErrTemplateNotFound), reachable with errors.Is/As.
	err error
}

// Unwrap returns the cause of the failure, if any.
func (e *Error) Unwrap() error { return e.err }

// Error formats the failure as SaltRenderError's str(): the message, then
// "; line N" and the excerpt when the line is known.
func (e *Error) Error() string {
	if e.Line > 0 && e.Context != "" {
		return fmt.Sprintf("%s; line %d\n\n%s", e.Msg, e.Line, e.Context)
	}
	return e.Msg
}

// errKind selects the prefix Salt puts in front of a Jinja exception.
type errKind int

const (
	kindRuntime   errKind = iota // "Jinja error: "
	kindUndefined                // "Jinja variable "
	kindSyntax                   // "Jinja syntax error: " (TemplateSyntaxError, TemplateRuntimeError)
	kindSalt                     // "Problem running salt function in Jinja template: "
)

// tplError is the internal error value raised during parse and eval; it
// becomes an *Error at the Render boundary.
type tplError struct {
	kind errKind
	msg  string
	name string // template where it happened ("" until attached)
	src  string // that template's source, for Salt's excerpt
	line int
	err  error // wrapped cause, e.g. from the Salt caller
}

func (e *tplError) Error() string { return e.msg }
func (e *tplError) Unwrap() error { return e.err }

func syntaxErr(line int, format string, args ...any) *tplError {
	return &tplError{kind: kindSyntax, msg: fmt.Sprintf(format, args...), line: line}
}

func runtimeErr(format string, args ...any) *tplError {
	return &tplError{kind: kindRuntime, msg: fmt.Sprintf(format, args...)}
}

// typeErr mimics a Python TypeError, which Salt reports as "Jinja error".
func typeErr(format string, args ...any) *tplError {
	return runtimeErr(format, args...)
}

// templateErr is a jinja2 TemplateRuntimeError / TemplateError, reported by
// Salt as a "Jinja syntax error".
func templateErr(format string, args ...any) *tplError {
	return &tplError{kind: kindSyntax, msg: fmt.Sprintf(format, args...)}
}

// getContext reproduces salt.utils.stringutils.get_context: up to five
// lines either side of line, "[...]" where cut, and marker appended to the
// offending line.
func getContext(src string, line int, marker string) string {
	lines := splitLines(src)
	n := len(lines)
	if line > n {
		return src
	}
	start := max(0, line-5-1)
	end := min(n, line+5)
	errIdx := line - start - 1
	var buf []string
	if start > 0 {
		buf = append(buf, "[...]")
		errIdx++
	}
	buf = append(buf, lines[start:end]...)
	if end < n {
		buf = append(buf, "[...]")
	}
	if errIdx >= 0 && errIdx < len(buf) {
		buf[errIdx] += marker
	}
	return "---\n" + strings.Join(buf, "\n") + "\n---"
}

// splitLines is Python's str.splitlines for the line breaks templates use.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}
