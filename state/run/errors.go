package run

import (
	"errors"

	"github.com/hashicorp/go-multierror"
)

// FatalError aborts the whole job, as an exception raised outside a
// state's try block does in Salt (an invalid keyword argument to a state
// function, notes item 23).
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *FatalError) Unwrap() error { return e.Err }

// CompileError is CallHigh's error for high data that does not compile:
// nothing ran, and Salt answers with the list of messages instead of
// results (salt/state.py call_high). Errs holds one error a message, in
// Salt's order.
type CompileError struct{ Errs *multierror.Error }

// compileError collects msgs into a *CompileError, or nil for none.
func compileError(msgs []string) error {
	if len(msgs) == 0 {
		return nil
	}
	var errs *multierror.Error
	for _, m := range msgs {
		errs = multierror.Append(errs, errors.New(m))
	}
	return &CompileError{Errs: errs}
}

func (e *CompileError) Error() string { return e.Errs.Error() }

// Unwrap returns the collected errors.
func (e *CompileError) Unwrap() error { return e.Errs }

// Messages returns Salt's messages, one a problem, in order.
func (e *CompileError) Messages() []string {
	out := make([]string, len(e.Errs.Errors))
	for i, err := range e.Errs.Errors {
		out[i] = err.Error()
	}
	return out
}
