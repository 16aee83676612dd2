// Package test is Salt's test execution module (salt/modules/test.py):
// connectivity checks, argument echoes, retcode and exception triggers.
//
// Left out: missing_func (Salt's own loader test: never loads),
// collatz is kept; Python-only introspection (provider files,
// not_loaded) answers from Brine's registry instead.
package test

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func reg(name, doc string, spec modules.Spec, fn modules.Func) {
	modules.Register(modules.Function{Name: "test." + name, Doc: doc, Spec: spec, Fn: fn})
}

func params(p ...modules.Param) modules.Spec { return modules.Spec{Params: p} }

func init() {
	reg("ping", "Check that the minion answers; returns True. Not an ICMP ping.", params(),
		func(context.Context, *modules.Call) (any, error) { return true, nil })
	reg("echo", "Return the given text unchanged, to test the connection.", params(req("text")),
		func(_ context.Context, c *modules.Call) (any, error) { return c.Arg("text"), nil })
	reg("true", "Always return True.", params(),
		func(context.Context, *modules.Call) (any, error) { return true, nil })
	reg("false", "Always return False.", params(),
		func(context.Context, *modules.Call) (any, error) { return false, nil })
	reg("outputter", "Return the data passed in, to exercise outputters.", params(req("data")),
		func(_ context.Context, c *modules.Call) (any, error) { return c.Arg("data"), nil })
	reg("retcode", "Set the job's return code to code (default 42) and return True.", params(opt("code", 42)), retcode)
	reg("sleep", "Sleep for length seconds, then return True.", params(req("length")), sleep)
	reg("rand_sleep", "Sleep a random number of seconds up to max (default 60), then return True.",
		params(opt("max", 60)), randSleep)
	reg("fib", "Return the num-th Fibonacci number and the seconds it took, for performance tests.",
		params(req("num")), fib)
	reg("collatz", "Return the Collatz sequence from start and the seconds it took, for performance tests.",
		params(req("start")), collatz)
	reg("exception", "Raise an exception carrying message (default 'Test Exception').",
		params(opt("message", "Test Exception")), exception)
	reg("assertion", "Assert that the argument is true; fail otherwise.", params(req("assertion")), assertion)
	reg("random_hash", "Hash a random integer between 0 and size with hash_type (default: the hash_type option, sha256).",
		params(opt("size", 9999999999), opt("hash_type", nil)), randomHash)
	reg("rand_str", "Old name of test.random_hash, kept for compatibility.",
		params(opt("size", 9999999999), opt("hash_type", nil)), randomHash)
	reg("tty", "Deprecated: moved to cmd.tty.", modules.Spec{VarArgs: true, VarKw: true},
		func(context.Context, *modules.Call) (any, error) {
			return "ERROR: This function has been moved to cmd.tty", nil
		})
	reg("deprecation_warning", "Return True; Salt also emits two test deprecation warnings here.", params(),
		func(context.Context, *modules.Call) (any, error) { return true, nil })
	registerArgs()
	registerIntrospection()
}

func retcode(_ context.Context, c *modules.Call) (any, error) {
	c.Env.Context["retcode"] = c.Arg("code")
	if n, ok := toInt(c.Arg("code")); ok {
		c.Env.Context["retcode"] = n
	}
	return true, nil
}

// toInt is Python's int() on the value model: ints, floats truncated,
// decimal strings.
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case float64:
		return int(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(x, "_", "")))
		return n, err == nil
	}
	return 0, false
}

func intArg(c *modules.Call, name string) (int, error) {
	v := c.Arg(name)
	n, ok := toInt(v)
	if !ok {
		if s, isStr := v.(string); isStr {
			return 0, fmt.Errorf("ValueError: invalid literal for int() with base 10: %s", py.Repr(s))
		}
		return 0, fmt.Errorf("TypeError: int() argument must be a string, a bytes-like object or a real number, not '%s'", py.TypeName(v))
	}
	return n, nil
}

func sleep(ctx context.Context, c *modules.Call) (any, error) {
	n, err := intArg(c, "length")
	if err != nil {
		return nil, err
	}
	return true, wait(ctx, time.Duration(n)*time.Second)
}

func randSleep(ctx context.Context, c *modules.Call) (any, error) {
	n, err := intArg(c, "max")
	if err != nil {
		return nil, err
	}
	r, err := rand.Int(rand.Reader, big.NewInt(int64(n)+1))
	if err != nil {
		return nil, err
	}
	return true, wait(ctx, time.Duration(r.Int64())*time.Second)
}

func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func fib(_ context.Context, c *modules.Call) (any, error) {
	n, err := intArg(c, "num")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		//lint:ignore ST1005 Salt's exact message
		return nil, fmt.Errorf("ValueError: Negative number is not allowed!")
	}
	start := time.Now()
	if n < 2 {
		return []any{n, time.Since(start).Seconds()}, nil
	}
	prev, curr := big.NewInt(0), big.NewInt(1)
	for i := 1; i < n; i++ {
		prev.Add(prev, curr)
		prev, curr = curr, prev
	}
	var v any = curr.String()
	if curr.IsInt64() {
		v = int(curr.Int64())
	}
	return []any{v, time.Since(start).Seconds()}, nil
}

func collatz(_ context.Context, c *modules.Call) (any, error) {
	n, err := intArg(c, "start")
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	steps := []any{}
	for n != 1 {
		if n < 1 {
			// Salt never returns for these; fail instead of spinning.
			return nil, fmt.Errorf("ValueError: collatz needs a start of at least 1, got %d", n)
		}
		if len(steps) == 0 {
			steps = append(steps, n)
		} else {
			steps = append(steps, float64(n))
		}
		if n%2 == 0 {
			n /= 2
		} else {
			n = n*3 + 1
		}
	}
	return []any{steps, time.Since(begin).Seconds()}, nil
}

func exception(_ context.Context, c *modules.Call) (any, error) {
	//lint:ignore ST1005 Salt's exact message
	return nil, fmt.Errorf("Exception: %s", c.Str("message"))
}

func assertion(_ context.Context, c *modules.Call) (any, error) {
	if !c.Bool("assertion") {
		return nil, fmt.Errorf("AssertionError")
	}
	return nil, nil
}

var hashes = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New,
	"sha384": sha512.New384, "sha512": sha512.New,
}

func randomHash(_ context.Context, c *modules.Call) (any, error) {
	size, err := intArg(c, "size")
	if err != nil {
		return nil, err
	}
	ht := c.Str("hash_type")
	if !c.Bool("hash_type") {
		ht, _ = c.Env.Opts.Value("hash_type").(string)
		if ht == "" {
			ht = "sha256"
		}
	}
	newHash, ok := hashes[ht]
	if !ok {
		return nil, fmt.Errorf("AttributeError: module 'hashlib' has no attribute '%s'", ht)
	}
	r, err := rand.Int(rand.Reader, big.NewInt(int64(size)+1))
	if err != nil {
		return nil, err
	}
	h := newHash()
	h.Write([]byte(r.String()))
	return hex.EncodeToString(h.Sum(nil)), nil
}
