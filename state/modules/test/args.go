package test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

var varAll = modules.Spec{VarArgs: true, VarKw: true}

func registerArgs() {
	reg("kwarg", "Return the keyword arguments passed in, including Salt's __pub_* publish data.",
		modules.Spec{VarKw: true},
		func(_ context.Context, c *modules.Call) (any, error) { return allKwargs(c), nil })
	reg("arg", "Return the positional and keyword arguments passed in as {args, kwargs}.", varAll,
		func(_ context.Context, c *modules.Call) (any, error) {
			return ordered.FromPairs("args", args(c), "kwargs", allKwargs(c)), nil
		})
	reg("arg_clean", "Like test.arg, without the __pub_* keyword arguments.", varAll,
		func(_ context.Context, c *modules.Call) (any, error) {
			return ordered.FromPairs("args", args(c), "kwargs", c.Kwargs.Copy()), nil
		})
	reg("arg_repr", "Return Python repr() strings of the positional and keyword arguments.", varAll, argRepr)
	reg("arg_type", "Return the Python type of each positional and keyword argument.", varAll, argType)
	reg("try", "Run module with the keyword arguments; return None on failure, or the error when return_try_exception is set.",
		modules.Spec{Params: []modules.Param{req("module"), opt("return_try_exception", false)}, VarKw: true}, try)
	reg("cross_test", "Call another execution function through the loader with the list args.",
		params(req("func"), opt("args", nil)), crossTest)
	reg("raise_exception", "Raise the named Python built-in or salt.exceptions exception with the given arguments; return False if there is no such exception.",
		modules.Spec{Params: []modules.Param{req("name")}, VarArgs: true, VarKw: true}, raiseException)
}

func args(c *modules.Call) []any {
	if c.VarArgs == nil {
		return []any{}
	}
	return c.VarArgs
}

// allKwargs returns the caller's keyword arguments followed by the
// publish data, the order Salt's load_args_and_kwargs builds.
func allKwargs(c *modules.Call) *ordered.Map {
	m := c.Kwargs.Copy()
	c.Pub.Range(func(k, v any) bool {
		if strings.HasPrefix(ordered.KeyString(k), "__pub_") {
			m.Set(k, v)
		}
		return true
	})
	return m
}

func argRepr(_ context.Context, c *modules.Call) (any, error) {
	a := args(c)
	tuple := py.Repr(a)
	tuple = "(" + tuple[1:len(tuple)-1]
	if len(a) == 1 {
		tuple += ","
	}
	tuple += ")"
	return ordered.FromPairs("args", tuple, "kwargs", py.Repr(allKwargs(c))), nil
}

func argType(_ context.Context, c *modules.Call) (any, error) {
	types := []any{}
	for _, a := range args(c) {
		types = append(types, "<class '"+py.TypeName(a)+"'>")
	}
	kw := ordered.New()
	allKwargs(c).Range(func(k, v any) bool {
		kw.Set(k, "<class '"+py.TypeName(v)+"'>")
		return true
	})
	return ordered.FromPairs("args", types, "kwargs", kw), nil
}

func try(ctx context.Context, c *modules.Call) (any, error) {
	ret, err := c.Env.Run(ctx, c.Str("module"), nil, c.Kwargs)
	if err != nil {
		if c.Bool("return_try_exception") {
			return err.Error(), nil
		}
		return nil, nil
	}
	return ret, nil
}

func crossTest(ctx context.Context, c *modules.Call) (any, error) {
	a, _ := c.Arg("args").([]any)
	ret, err := c.Env.Run(ctx, c.Str("func"), a, nil)
	var unavailable *modules.UnavailableError
	if errors.As(err, &unavailable) {
		return nil, fmt.Errorf("KeyError: %s", py.Repr(c.Str("func")))
	}
	return ret, err
}

// builtinExceptions are Python's built-in exception classes that
// test.raise_exception can raise by name.
var builtinExceptions = map[string]bool{
	"ArithmeticError": true, "AssertionError": true, "AttributeError": true, "BaseException": true,
	"BlockingIOError": true, "BrokenPipeError": true, "BufferError": true, "ChildProcessError": true,
	"ConnectionAbortedError": true, "ConnectionError": true, "ConnectionRefusedError": true,
	"ConnectionResetError": true, "EOFError": true, "EnvironmentError": true, "Exception": true,
	"FileExistsError": true, "FileNotFoundError": true, "FloatingPointError": true,
	"GeneratorExit": true, "IOError": true, "ImportError": true, "IndentationError": true,
	"IndexError": true, "InterruptedError": true, "IsADirectoryError": true, "KeyError": true,
	"KeyboardInterrupt": true, "LookupError": true, "MemoryError": true, "ModuleNotFoundError": true,
	"NameError": true, "NotADirectoryError": true, "NotImplementedError": true, "OSError": true,
	"OverflowError": true, "PermissionError": true, "ProcessLookupError": true, "RecursionError": true,
	"ReferenceError": true, "RuntimeError": true, "StopIteration": true, "SyntaxError": true,
	"SystemError": true, "SystemExit": true, "TabError": true, "TimeoutError": true, "TypeError": true,
	"UnboundLocalError": true, "UnicodeError": true, "ValueError": true, "ZeroDivisionError": true,
}

// saltExceptions are the salt.exceptions classes; the ones the minion
// words specially map to Brine's error types.
var saltExceptions = map[string]bool{
	"SaltException": true, "SaltClientError": true, "SaltMasterError": true, "SaltSystemExit": true,
	"CommandExecutionError": true, "CommandNotFoundError": true, "SaltInvocationError": true,
	"SaltRenderError": true, "SaltReqTimeoutError": true, "TimedProcTimeoutError": true,
	"MinionError": true, "FileserverConfigError": true, "SaltCacheError": true, "TimeoutError": true,
	"AuthenticationError": true, "AuthorizationError": true, "ArgumentValueError": true,
	"CheckError": true, "LoaderError": true, "PkgParseError": true, "SaltConfigurationError": true,
	"SaltDeserializationError": true, "SaltRunnerError": true, "SaltWheelError": true,
	"SaltCloudException": true, "NotImplemented": true, "MissingSmb": true, "GitLockError": true,
	"InvalidConfigError": true, "InvalidEntityError": true, "SaltClientTimeout": true,
}

func raiseException(_ context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	msg := excMessage(args(c))
	if short, ok := strings.CutPrefix(name, "salt.exceptions."); ok {
		if !saltExceptions[short] {
			c.Env.Log.Error("No such exception", "name", name)
			return false, nil
		}
		switch short {
		case "CommandExecutionError":
			return nil, &modules.ExecutionError{Msg: msg}
		case "SaltInvocationError":
			return nil, &modules.InvocationError{Msg: msg}
		}
		return nil, fmt.Errorf("%s: %s", name, msg)
	}
	if !builtinExceptions[name] {
		c.Env.Log.Error("No such exception", "name", name)
		return false, nil
	}
	if name == "TypeError" {
		return nil, &modules.ArgError{Fun: c.Fun.Name, Reason: msg}
	}
	return nil, fmt.Errorf("%s: %s", name, msg)
}

// excMessage is str() of a Python exception built from args.
func excMessage(a []any) string {
	switch len(a) {
	case 0:
		return ""
	case 1:
		if s, ok := a[0].(string); ok {
			return s
		}
		return py.Repr(a[0])
	}
	r := py.Repr(a)
	return "(" + r[1:len(r)-1] + ")"
}
