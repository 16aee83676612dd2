package saltyaml

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Stage names the step of loading at which an Error was found; they are
// PyYAML's exception classes (ScannerError, ParserError, ComposerError,
// ConstructorError) in lower case. Salt's yaml renderer reports scanner
// errors with a source excerpt and the others as the plain message
// (salt/renderers/yaml.py).
const (
	StageReader      = "reader"
	StageScanner     = "scanner"
	StageParser      = "parser"
	StageComposer    = "composer"
	StageConstructor = "constructor"
	// StageValue marks a Python error raised while building a scalar
	// (int(), float(), a bool lookup, base64) rather than a YAMLError.
	StageValue = "value"
)

// Error is a YAML load error with the position PyYAML would report.
// Line and Column are 1-based; 0 means unknown. Context, when set, is
// PyYAML's "while ..." phrase with its own position.
type Error struct {
	File          string
	Line, Column  int
	Msg           string
	Stage         string
	Context       string
	ContextLine   int
	ContextColumn int
}

// Error renders the error as PyYAML's MarkedYAMLError does, with the file
// name where PyYAML prints "<unicode string>":
//
//	while constructing a mapping
//	  in "top.sls", line 1, column 1
//	found conflicting ID 'same_id'
//	  in "top.sls", line 3, column 1
//
// The context position is left out when it equals the problem position.
func (e *Error) Error() string {
	var lines []string
	if e.Context != "" {
		lines = append(lines, e.Context)
		if e.ContextLine > 0 && (e.ContextLine != e.Line || e.ContextColumn != e.Column) {
			lines = append(lines, e.where(e.ContextLine, e.ContextColumn))
		}
	}
	lines = append(lines, e.Msg)
	lines = append(lines, e.where(e.Line, e.Column))
	return strings.Join(lines, "\n")
}

func (e *Error) where(line, col int) string {
	name := e.File
	if name == "" {
		name = "<unicode string>"
	}
	if col <= 0 {
		return fmt.Sprintf("  in %q, line %d", name, line)
	}
	return fmt.Sprintf("  in %q, line %d, column %d", name, line, col)
}

// SaltMessage is the text Salt's yaml renderer (salt/renderers/yaml.py)
// puts in its SaltRenderError for this error. Salt's libyaml marks carry
// no source buffer, so a scanner error is its bare problem ("found
// character that cannot start any token"); parser, composer and
// constructor errors are PyYAML's full text naming "<unicode string>";
// Python value errors are their message.
func (e *Error) SaltMessage() string {
	switch e.Stage {
	case StageScanner, StageValue, StageReader:
		return e.Msg
	}
	c := *e
	c.File = ""
	return c.Error()
}

// fromYAML converts an error of the underlying parser into *Error.
func fromYAML(err error, file string) error {
	var le *yaml.LoadError
	if !errors.As(err, &le) {
		return &Error{File: file, Line: 1, Msg: err.Error(), Stage: StageReader}
	}
	e := &Error{
		File:   file,
		Line:   le.Mark.Line,
		Column: le.Mark.Column,
		Msg:    le.Message,
		Stage:  string(le.Stage),
	}
	if le.ContextMsg != "" {
		e.Context = le.ContextMsg
		e.ContextLine, e.ContextColumn = le.ContextMark.Line, le.ContextMark.Column
	}
	if e.Line == 0 {
		e.Line = 1
	}
	if e.Stage == StageComposer && strings.HasPrefix(e.Msg, "unknown anchor") {
		e.Msg = "found undefined alias" // libyaml/PyYAML wording
	}
	return e
}

// nodeError is a constructor error at node n.
func nodeError(n *yaml.Node, format string, args ...any) *Error {
	return &Error{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...), Stage: StageConstructor}
}
