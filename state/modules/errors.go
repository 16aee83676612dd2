package modules

import "fmt"

// ExecutionError is Salt's CommandExecutionError: the function ran but
// could not do its work. A job reports it as "ERROR: <msg>" with retcode 1
// (salt/minion.py _thread_return).
type ExecutionError struct {
	Msg string
	Err error
}

func (e *ExecutionError) Error() string { return e.Msg }

// Unwrap returns the underlying cause, if any.
func (e *ExecutionError) Unwrap() error { return e.Err }

// Errorf returns an *ExecutionError with a formatted message; a %w verb
// keeps the cause for errors.Is.
func Errorf(format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &ExecutionError{Msg: err.Error(), Err: unwrapOnce(err)}
}

// InvocationError is Salt's SaltInvocationError: the arguments have the
// right shape but wrong values. A job reports it as
// "ERROR executing '<fun>': <msg>" with retcode 1.
type InvocationError struct{ Msg string }

func (e *InvocationError) Error() string { return e.Msg }

// Invalidf returns an *InvocationError with a formatted message.
func Invalidf(format string, a ...any) error {
	return &InvocationError{Msg: fmt.Sprintf(format, a...)}
}

func unwrapOnce(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok {
		return u.Unwrap()
	}
	return nil
}
