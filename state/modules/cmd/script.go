package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

func cacheError() *ordered.Map {
	return ordered.FromPairs("pid", 0, "retcode", 1, "stdout", "", "stderr", "", "cache_error", true)
}

// script is cmd.script: fetch source (salt:// through the job's file
// client, or a local path), copy it to a private temporary file and run
// it with args. Fetch failures give Salt's cache_error return.
func script(ctx context.Context, c *modules.Call) (any, error) {
	source := c.Str("source")
	saltenv := c.Str("saltenv")
	if saltenv == "" {
		saltenv, _ = c.Env.Opts.Value("saltenv").(string)
	}
	if saltenv == "" {
		saltenv = "base"
	}
	if c.Bool("template") {
		return nil, &modules.ExecutionError{Msg: "template " + c.Str("template") + " is not supported by this minion"}
	}
	body, err := fetch(ctx, c.Env, source, saltenv)
	if err != nil {
		c.Env.Log.Error("cmd.script: unable to fetch source", "source", source, logattr.Err, err)
		return cacheError(), nil
	}
	dir := ""
	if cwd := c.Str("cwd"); cwd != "" {
		dir = cwd
	}
	f, err := os.CreateTemp(dir, "__salt.tmp.*"+filepath.Ext(strings.SplitN(source, "?", 2)[0]))
	if err != nil {
		return cacheError(), nil
	}
	path := f.Name()
	defer os.Remove(path)
	_, werr := f.Write(body)
	if cerr := f.Close(); werr != nil || cerr != nil {
		return cacheError(), nil
	}
	if err := os.Chmod(path, 0o500); err != nil {
		return cacheError(), nil
	}
	argv := []any{path}
	if a := c.Arg("args"); a != nil && modules.Truthy(a) {
		c.Args["python_shell"] = false
		switch x := a.(type) {
		case []any:
			argv = append(argv, x...)
		default:
			parts, err := py.Split(ordered.KeyString(x))
			if err != nil {
				return nil, &modules.ExecutionError{Msg: "ValueError: " + err.Error()}
			}
			for _, p := range parts {
				argv = append(argv, p)
			}
		}
	}
	if u, lerr := lookupRunas(c.Str("runas"), "", c.Str("password")); lerr == nil {
		chownToRunas(path, u)
	}
	c.Args["cmd"] = argv
	mode := modeSeparate
	if c.Bool("bg") {
		mode = modeDetached
	}
	ret, err := execute(ctx, c, mode)
	var execErr *modules.ExecutionError
	var invErr *modules.InvocationError
	if errors.As(err, &execErr) || errors.As(err, &invErr) {
		c.Env.Log.Error("cmd.script: Unable to run script", logattr.Err, err)
		ret = ordered.New()
	} else if err != nil {
		return nil, err
	}
	if c.Bool("hide_output") {
		ret.Set("stdout", "")
		ret.Set("stderr", "")
	}
	return ret, nil
}

func fetch(ctx context.Context, env *modules.Env, source, saltenv string) ([]byte, error) {
	if strings.HasPrefix(source, "salt://") {
		if env.Files == nil {
			return nil, errors.New("no file server available")
		}
		return env.Files.Get(ctx, source, saltenv)
	}
	return os.ReadFile(strings.TrimPrefix(source, "file://"))
}

// execCode is cmd.exec_code_all: write code to a temporary file and run
// `lang file args…` without a shell.
func execCode(ctx context.Context, c *modules.Call) (*ordered.Map, error) {
	f, err := os.CreateTemp("", "__salt.tmp.*")
	if err != nil {
		return nil, &modules.ExecutionError{Msg: err.Error()}
	}
	path := f.Name()
	defer os.Remove(path)
	_, werr := f.WriteString(c.Str("code"))
	if cerr := f.Close(); werr != nil || cerr != nil {
		return nil, &modules.ExecutionError{Msg: "unable to write code file"}
	}
	argv := []any{c.Str("lang"), path}
	switch x := c.Arg("args").(type) {
	case string:
		argv = append(argv, x)
	case []any:
		argv = append(argv, x...)
	}
	args := map[string]any{"cmd": argv, "cwd": c.Arg("cwd"), "python_shell": false}
	for _, p := range sig(strings.ReplaceAll(allSig, "\n", " ")).Params {
		if _, set := args[p.Name]; set {
			continue
		}
		if v, ok := c.Kwargs.Get(p.Name); ok {
			args[p.Name] = v
		} else if p.Optional {
			args[p.Name] = p.Default
		}
	}
	sub := &modules.Call{Env: c.Env, Fun: c.Fun, Args: args, Kwargs: ordered.New(), Pub: ordered.New()}
	r, err := runAll(ctx, sub)
	if err != nil {
		return nil, err
	}
	return r.(*ordered.Map), nil
}
