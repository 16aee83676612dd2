package test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func newEnv() *modules.Env {
	return (&modules.Env{
		Pillar:   ordered.New(),
		Opts:     ordered.FromPairs("id", "web1"),
		Registry: modules.Default,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Context:  map[string]any{},
	}).WithGrains(ordered.FromPairs("id", "web1", "os", "Debian"))
}

var cmpMap = cmp.Comparer(func(a, b *ordered.Map) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
})

func TestReturns(t *testing.T) {
	pub := ordered.FromPairs("a", 1, "__pub_jid", "123", "__pub_fun", "test.arg")
	tests := []struct {
		fun    string
		args   []any
		kwargs *ordered.Map
		want   any
	}{
		{"test.ping", nil, nil, true},
		{"test.true", nil, nil, true},
		{"test.false", nil, nil, false},
		{"test.echo", []any{"hello"}, nil, "hello"},
		{"test.echo", nil, ordered.FromPairs("text", 3), 3},
		{"test.outputter", []any{[]any{1, "x"}}, nil, []any{1, "x"}},
		{"test.version", nil, nil, "3006.19"},
		{"test.kwarg", nil, pub, ordered.FromPairs("a", 1, "__pub_jid", "123", "__pub_fun", "test.arg")},
		{"test.arg", []any{1, "two"}, ordered.FromPairs("txt", "x"),
			ordered.FromPairs("args", []any{1, "two"}, "kwargs", ordered.FromPairs("txt", "x"))},
		{"test.arg_clean", []any{1}, pub, ordered.FromPairs("args", []any{1}, "kwargs", ordered.FromPairs("a", 1))},
		{"test.arg_repr", []any{1, "two", 3.1}, ordered.FromPairs("txt", "hello"),
			ordered.FromPairs("args", "(1, 'two', 3.1)", "kwargs", "{'txt': 'hello'}")},
		{"test.arg_repr", []any{"one"}, nil, ordered.FromPairs("args", "('one',)", "kwargs", "{}")},
		{"test.arg_type", []any{1, "x", nil, true, 1.5, []any{}}, ordered.FromPairs("m", ordered.New()),
			ordered.FromPairs("args", []any{"<class 'int'>", "<class 'str'>", "<class 'NoneType'>", "<class 'bool'>",
				"<class 'float'>", "<class 'list'>"}, "kwargs", ordered.FromPairs("m", "<class 'dict'>"))},
		{"test.retcode", nil, nil, true},
		{"test.sleep", []any{"0"}, nil, true},
		{"test.tty", []any{"tty0"}, nil, "ERROR: This function has been moved to cmd.tty"},
		{"test.try", []any{"test.echo"}, ordered.FromPairs("text", "t"), "t"},
		{"test.try", []any{"test.exception"}, nil, nil},
		{"test.try", []any{"test.exception"}, ordered.FromPairs("return_try_exception", true), "Exception: Test Exception"},
		{"test.cross_test", []any{"test.echo", []any{"x"}}, nil, "x"},
		{"test.raise_exception", []any{"NoSuchError"}, nil, false},
		{"test.conf_test", nil, nil, ""},
		{"test.provider", []any{"test"}, nil, "test"},
		{"test.provider", []any{"nosuch"}, nil, ""},
		{"test.not_loaded", nil, nil, []any{}},
		{"test.assertion", []any{true}, nil, nil},
		{"test.deprecation_warning", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.fun, func(t *testing.T) {
			env := newEnv()
			got, err := env.Run(context.Background(), tt.fun, tt.args, tt.kwargs)
			if err != nil {
				t.Fatalf("%s: %v", tt.fun, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpMap); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.fun, diff)
			}
		})
	}
}

func TestRetcodeContext(t *testing.T) {
	for _, tt := range []struct {
		args []any
		want any
	}{{nil, 42}, {[]any{3}, 3}, {[]any{"7"}, 7}} {
		env := newEnv()
		if _, err := env.Run(context.Background(), "test.retcode", tt.args, nil); err != nil {
			t.Fatal(err)
		}
		if got := env.Context["retcode"]; got != tt.want {
			t.Errorf("retcode %v: context retcode = %v, want %v", tt.args, got, tt.want)
		}
	}
}

func TestFibAndHashes(t *testing.T) {
	env := newEnv()
	for n, want := range map[int]any{0: 0, 1: 1, 2: 1, 10: 55, 90: 2880067194370816120, 100: "354224848179261915075"} {
		got, err := env.Run(context.Background(), "test.fib", []any{n}, nil)
		if err != nil {
			t.Fatal(err)
		}
		pair := got.([]any)
		if len(pair) != 2 || pair[0] != want {
			t.Errorf("fib(%d) = %v, want [%v, seconds]", n, got, want)
		}
		if _, ok := pair[1].(float64); !ok {
			t.Errorf("fib(%d) time = %T, want float64", n, pair[1])
		}
	}
	for ht, n := range map[any]int{nil: 64, "md5": 32, "sha1": 40, "sha512": 128} {
		kw := ordered.New()
		if ht != nil {
			kw.Set("hash_type", ht)
		}
		for _, fun := range []string{"test.random_hash", "test.rand_str"} {
			got, err := env.Run(context.Background(), fun, nil, kw)
			if err != nil {
				t.Fatal(err)
			}
			if s, _ := got.(string); len(s) != n {
				t.Errorf("%s(hash_type=%v) = %q, want %d hex digits", fun, ht, s, n)
			}
		}
	}
	got, err := env.Run(context.Background(), "test.collatz", []any{3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{3, 10.0, 5.0, 16.0, 8.0, 4.0, 2.0}, got.([]any)[0]); diff != "" {
		t.Errorf("collatz(3) (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		fun     string
		args    []any
		kwargs  *ordered.Map
		want    string
		argErr  bool
		execErr bool
	}{
		{fun: "test.echo", want: "Passed invalid arguments to test.echo: echo() missing 1 required positional argument: 'text'", argErr: true},
		{fun: "test.ping", args: []any{1}, want: "Passed invalid arguments to test.ping: ping() takes 0 positional arguments but 1 was given", argErr: true},
		{fun: "test.echo", args: []any{1, 2}, want: "Passed invalid arguments to test.echo: echo() takes 1 positional argument but 2 were given", argErr: true},
		{fun: "test.retcode", args: []any{1, 2}, want: "Passed invalid arguments to test.retcode: retcode() takes from 0 to 1 positional arguments but 2 were given", argErr: true},
		{fun: "test.echo", args: []any{1}, kwargs: ordered.FromPairs("text", 2), want: "Passed invalid arguments to test.echo: echo() got multiple values for argument 'text'", argErr: true},
		{fun: "test.ping", kwargs: ordered.FromPairs("x", 1), want: "Passed invalid arguments to test.ping: ping() got an unexpected keyword argument 'x'", argErr: true},
		{fun: "test.exception", want: "Exception: Test Exception"},
		{fun: "test.exception", args: []any{"Oh noes!"}, want: "Exception: Oh noes!"},
		{fun: "test.assertion", args: []any{false}, want: "AssertionError"},
		{fun: "test.fib", args: []any{-1}, want: "ValueError: Negative number is not allowed!"},
		{fun: "test.sleep", args: []any{"x"}, want: "ValueError: invalid literal for int() with base 10: 'x'"},
		{fun: "test.random_hash", kwargs: ordered.FromPairs("hash_type", "nope"), want: "AttributeError: module 'hashlib' has no attribute 'nope'"},
		{fun: "test.raise_exception", args: []any{"ValueError", "bad"}, want: "ValueError: bad"},
		{fun: "test.raise_exception", args: []any{"salt.exceptions.CommandExecutionError", "went wrong"}, want: "went wrong", execErr: true},
		{fun: "test.raise_exception", args: []any{"TypeError", "An integer is required"}, want: "Passed invalid arguments to test.raise_exception: An integer is required", argErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.fun, func(t *testing.T) {
			_, err := newEnv().Run(context.Background(), tt.fun, tt.args, tt.kwargs)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("%s%v: err = %v, want %q", tt.fun, tt.args, err, tt.want)
			}
			var argErr *modules.ArgError
			var execErr *modules.ExecutionError
			if errors.As(err, &argErr) != tt.argErr || errors.As(err, &execErr) != tt.execErr {
				t.Errorf("%s: error type %T", tt.fun, err)
			}
		})
	}
}

func TestIntrospection(t *testing.T) {
	env := newEnv()
	ctx := context.Background()
	rep, err := env.Run(ctx, "test.versions_report", nil, nil)
	if err != nil || !strings.Contains(rep.(string), "Salt Version:\n") || !strings.Contains(rep.(string), "Salt: 3006.19") {
		t.Errorf("versions_report = %q, %v", rep, err)
	}
	opts, err := env.Run(ctx, "test.opts_pkg", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := opts.(*ordered.Map).Value("grains").(*ordered.Map); !ok || g.Value("os") != "Debian" {
		t.Errorf("opts_pkg grains = %v", opts)
	}
	mr, err := env.Run(ctx, "test.module_report", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs, _ := mr.(*ordered.Map).Value("functions").([]any); len(fs) == 0 || !containsStr(fs, "test.ping") {
		t.Errorf("module_report functions = %v", fs)
	}
	provs, err := env.Run(ctx, "test.providers", nil, nil)
	if err != nil || provs.(*ordered.Map).Value("test") != "test" {
		t.Errorf("providers = %v, %v", provs, err)
	}
}

func containsStr(l []any, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
