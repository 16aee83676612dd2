package file

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// sedEsc is _sed_esc: quote ' and / for a sed s/// expression, and with
// escapeAll the regex metacharacters too.
func sedEsc(s string, escapeAll bool) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "'", `'"'"'`), "/", `\/`)
	if escapeAll {
		for _, c := range "^.[$()|*+?{" {
			s = strings.ReplaceAll(s, string(c), `\`+string(c))
		}
	}
	return s
}

// sedArgv builds the sed command line of file.sed and file.sed_contains.
func sedArgv(options, expr, path string) ([]any, error) {
	if runtime.GOOS == "darwin" {
		options = strings.ReplaceAll(options, "-r", "-E")
	}
	opts, err := py.Split(options)
	if err != nil {
		return nil, modules.Errorf("%s", err.Error())
	}
	argv := []any{"sed"}
	for _, o := range opts {
		argv = append(argv, o)
	}
	return append(argv, expr, path), nil
}

func limitExpr(limit string) string {
	if limit == "" {
		return ""
	}
	return "/" + limit + "/ "
}

// sed is file.sed: run sed -i over path through cmd.run_all and return
// its result dict; false when path does not exist.
func sed(ctx context.Context, c *modules.Call) (any, error) {
	path := expandUser(c.Str("path"))
	if _, err := os.Stat(path); err != nil {
		return false, nil
	}
	esc := c.Bool("escape_all")
	negate := ""
	if c.Bool("negate_match") {
		negate = "!"
	}
	expr := fmt.Sprintf("%s%ss/%s/%s/%s", limitExpr(sedEsc(c.Str("limit"), esc)), negate,
		sedEsc(py.Str(c.Arg("before")), esc), sedEsc(py.Str(c.Arg("after")), esc), c.Str("flags"))
	inplace := "-i"
	if b := backupSuffix(c.Arg("backup")); b != "" {
		inplace += b
	}
	argv, err := sedArgv(c.Str("options"), expr, path)
	if err != nil {
		return nil, err
	}
	argv = append([]any{"sed", inplace}, argv[1:]...)
	return c.Env.Run(ctx, "cmd.run_all", []any{argv}, ordered.FromPairs("python_shell", false))
}

// sedContains is file.sed_contains.
func sedContains(ctx context.Context, c *modules.Call) (any, error) {
	path := expandUser(c.Str("path"))
	if _, err := os.Stat(path); err != nil {
		return false, nil
	}
	expr := fmt.Sprintf("%ss/%s/$/p%s", limitExpr(sedEsc(py.Str(c.Arg("limit")), false)),
		sedEsc(py.Str(c.Arg("text")), false), c.Str("flags"))
	argv, err := sedArgv("-n -r -e", expr, path)
	if err != nil {
		return nil, err
	}
	out, err := c.Env.Run(ctx, "cmd.run", []any{argv}, ordered.FromPairs("python_shell", false))
	if err != nil {
		return nil, err
	}
	return modules.Truthy(out), nil
}
