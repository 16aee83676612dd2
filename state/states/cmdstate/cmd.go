// Package cmdstate holds Salt's `cmd` state module (salt/states/cmd.py): run,
// wait, script, wait_script and mod_watch. Commands run through the shell
// package, as Salt's cmd.run_all with python_shell=True does.
package cmdstate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/shell"
	"github.com/brinesalt/brine/state/states"
)

func init() { Register(states.Default) }

func p(name string) modules.Param { return modules.Param{Name: name, Optional: true} }

var runParams = []modules.Param{
	{Name: "name"}, p("cwd"), p("root"), p("runas"), p("shell"), p("env"), p("prepend_path"),
	{Name: "stateful", Optional: true, Default: false}, {Name: "output_loglevel", Optional: true, Default: "debug"},
	{Name: "hide_output", Optional: true, Default: false}, p("timeout"),
	{Name: "ignore_timeout", Optional: true, Default: false}, {Name: "use_vt", Optional: true, Default: false},
	p("success_retcodes"), p("success_stdout"), p("success_stderr"),
}

var scriptParams = []modules.Param{
	{Name: "name"}, p("source"), p("template"), p("cwd"), p("runas"), p("password"), p("shell"), p("env"),
	{Name: "stateful", Optional: true, Default: false}, p("timeout"), {Name: "use_vt", Optional: true, Default: false},
	{Name: "output_loglevel", Optional: true, Default: "debug"}, {Name: "hide_output", Optional: true, Default: false},
	p("defaults"), p("context"), p("success_retcodes"), p("success_stdout"), p("success_stderr"),
}

// Register adds the cmd state functions to r.
func Register(r *states.Registry) {
	run := modules.Spec{Params: runParams, VarKw: true}
	r.Register(states.Function{Name: "cmd.run", Spec: run, Fn: Run})
	r.Register(states.Function{Name: "cmd.wait", Spec: run, Fn: wait})
	r.Register(states.Function{Name: "cmd.watch", Spec: run, Fn: wait})
	script := modules.Spec{Params: scriptParams, VarKw: true}
	r.Register(states.Function{Name: "cmd.script", Spec: script, Fn: Script})
	r.Register(states.Function{Name: "cmd.wait_script", Spec: script, Fn: wait})
	r.Register(states.Function{Name: "cmd.mod_watch", Spec: modules.Spec{Params: []modules.Param{{Name: "name"}}, VarKw: true}, Fn: modWatch})
}

// wait does nothing by itself: the watch requisite calls mod_watch.
func wait(_ context.Context, c *states.Call) (*states.Result, error) {
	return states.NewResult(c.Arg("name"), states.True, ""), nil
}

// testName returns stateful's test_name and whether stateful is on.
func stateful(c *states.Call) (on bool, testName string) {
	switch v := c.Arg("stateful").(type) {
	case bool:
		return v, ""
	case []any:
		if len(v) > 0 {
			if m, ok := v[0].(*ordered.Map); ok {
				if tn, ok := m.Get("test_name"); ok {
					return false, ordered.KeyString(tn)
				}
			}
		}
	}
	return false, ""
}

func spec(c *states.Call, cmdline string) (shell.Spec, error) {
	s := shell.Spec{Cmd: cmdline, Cwd: c.Str("cwd"), RunAs: c.Str("runas"), Env: c.Arg("env"), Shell: c.Str("shell"),
		PrependPath: c.Str("prepend_path")}
	if s.Shell == "" && c.Env.Grains() != nil {
		if sh, ok := c.Env.Grains().Value("shell").(string); ok {
			s.Shell = sh
		}
	}
	switch t := c.Arg("timeout").(type) {
	case int:
		s.Timeout = time.Duration(t) * time.Second
	case float64:
		s.Timeout = time.Duration(t * float64(time.Second))
	}
	switch rc := c.Arg("success_retcodes").(type) {
	case int:
		s.SuccessRetcodes = []int{rc}
	case []any, string:
		for _, x := range splitStrings(rc) {
			if i, err := strconv.Atoi(x); err == nil {
				s.SuccessRetcodes = append(s.SuccessRetcodes, i)
			}
		}
	}
	s.SuccessStdout = splitStrings(c.Arg("success_stdout"))
	s.SuccessStderr = splitStrings(c.Arg("success_stderr"))
	return s, nil
}

// splitStrings is split_input for string lists: a list, or a
// comma-separated string.
func splitStrings(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		for _, p := range strings.Split(x, ",") {
			out = append(out, strings.TrimSpace(p))
		}
	case []any:
		for _, e := range x {
			out = append(out, ordered.KeyString(e))
		}
	}
	return out
}

func envValid(c *states.Call) bool {
	switch c.Arg("env").(type) {
	case nil, []any, *ordered.Map:
		return true
	}
	return false
}

// Run is cmd.run.
func Run(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	isStateful, testName := stateful(c)
	if c.Env.Test && testName != "" {
		name = testName
	}
	r := states.NewResult(name, states.False, "")
	if !envValid(c) {
		r.Comment = "Invalidly-formatted 'env' parameter. See documentation."
		return r, nil
	}
	if c.Env.Test && testName == "" {
		r.Result = states.None
		r.Comment = fmt.Sprintf("Command \"%s\" would have been executed", name)
		r.Changes = ordered.FromPairs("cmd", name)
		if isStateful {
			return reinterpret(r), nil
		}
		return r, nil
	}
	if cwd := c.Str("cwd"); cwd != "" {
		if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
			r.Comment = fmt.Sprintf("Desired working directory \"%s\" is not available", cwd)
			return r, nil
		}
	}
	s, _ := spec(c, name)
	out, err := shell.Run(ctx, s)
	if err != nil {
		r.Comment = err.Error()
		return r, nil
	}
	logFailure(c, name, out)
	r.Changes = out.Map()
	r.Result = states.TriOf(out.Retcode == 0)
	r.Comment = fmt.Sprintf("Command \"%s\" run", name)
	if c.Bool("ignore_timeout") && out.Retcode == 1 && strings.Contains(out.Stdout, "Timed out after") {
		r.Changes.Set("retcode", 0)
		r.Result = states.True
	}
	if isStateful {
		r = reinterpret(r)
	}
	if c.Env.Test && out.Retcode == 0 && r.Changes.Len() > 0 {
		r.Result = states.None
	}
	return r, nil
}

// logFailure logs a failed command as cmdmod does at error level.
func logFailure(c *states.Call, name string, out shell.Output) {
	if out.Retcode == 0 || c.Env.Log == nil {
		return
	}
	first, _, _ := strings.Cut(name, " ")
	c.Env.Log.Error(fmt.Sprintf("Command '%s' failed with return code: %d", first, out.Retcode))
	c.Env.Log.Error("stdout: " + out.Stdout)
	if out.Stderr != "" {
		c.Env.Log.Error("stderr: " + out.Stderr)
	}
	c.Env.Log.Error(fmt.Sprintf("retcode: %d", out.Retcode))
}

// Script is cmd.script: fetch the script from the file server and run it
// with the arguments that follow its name.
func Script(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	isStateful, testName := stateful(c)
	if c.Env.Test && testName != "" {
		name = testName
	}
	r := states.NewResult(name, states.False, "")
	if !envValid(c) {
		r.Comment = "Invalidly-formatted 'env' parameter. See documentation."
		return r, nil
	}
	source := c.Str("source")
	if source == "" {
		source = name
	}
	var args string
	if a, ok := c.Kw("args"); ok && modules.Truthy(a) {
		args = ordered.KeyString(a)
	} else if f := strings.Fields(name); len(f) > 1 {
		_, args, _ = strings.Cut(name, " ")
	}
	if c.Env.Test && testName == "" {
		r.Result = states.None
		r.Comment = fmt.Sprintf("Command '%s' would have been executed", name)
		if isStateful {
			return reinterpret(r), nil
		}
		return r, nil
	}
	if cwd := c.Str("cwd"); cwd != "" {
		if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
			r.Comment = fmt.Sprintf("Desired working directory \"%s\" is not available", cwd)
			return r, nil
		}
	}
	path, cleanup, err := fetchScript(ctx, c, strings.Fields(source)[0])
	if err != nil {
		r.Comment = fmt.Sprintf("Unable to cache script %s from saltenv '%s'", source, c.Saltenv)
		return r, nil
	}
	defer cleanup()
	cmdline := path
	if args != "" {
		cmdline += " " + args
	}
	s, _ := spec(c, cmdline)
	out, err := shell.Run(ctx, s)
	if err != nil {
		r.Comment = err.Error()
		return r, nil
	}
	r.Changes = out.Map()
	r.Result = states.TriOf(out.Retcode == 0)
	r.Comment = fmt.Sprintf("Command '%s' run", name)
	if isStateful {
		r = reinterpret(r)
	}
	return r, nil
}

func fetchScript(ctx context.Context, c *states.Call, source string) (string, func(), error) {
	var data []byte
	var err error
	if strings.HasPrefix(source, "salt://") {
		if c.Env.Files == nil {
			return "", nil, fmt.Errorf("no file client")
		}
		data, err = c.Env.Files.Get(ctx, source, c.Saltenv)
	} else {
		data, err = os.ReadFile(source)
	}
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "brine-script-")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, filepath.Base(source))
	if err := os.WriteFile(path, data, 0o700); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(dir) }, nil
}

// modWatch runs the command of a watching cmd.wait/run/script state.
func modWatch(ctx context.Context, c *states.Call) (*states.Result, error) {
	sfun := ordered.KeyString(c.Kwargs.Value("sfun"))
	args := map[string]any{}
	for k, v := range c.Args {
		args[k] = v
	}
	rebind := func(params []modules.Param) *states.Call {
		nc := *c
		nc.Args = map[string]any{}
		nc.Kwargs = ordered.New()
		for _, p := range params {
			if v, ok := c.Kwargs.Get(p.Name); ok {
				nc.Args[p.Name] = v
			} else {
				nc.Args[p.Name] = p.Default
			}
		}
		nc.Args["name"] = c.Arg("name")
		c.Kwargs.Range(func(k, v any) bool {
			if _, ok := nc.Args[ordered.KeyString(k)]; !ok {
				nc.Kwargs.Set(k, v)
			}
			return true
		})
		return &nc
	}
	switch sfun {
	case "wait", "run", "watch":
		return Run(ctx, rebind(runParams))
	case "wait_script", "script":
		return Script(ctx, rebind(scriptParams))
	}
	r := states.NewResult(c.Arg("name"), states.False, fmt.Sprintf(
		"cmd.%s does not work with the watch requisite, please use cmd.wait or cmd.wait_script", sfun))
	return r, nil
}

// reinterpret applies the stateful protocol (salt/states/cmd.py
// _reinterpreted_state): the last stdout line is JSON or key=value pairs
// saying whether the command changed something.
func reinterpret(r *states.Result) *states.Result {
	ret := r.Changes
	r.Changes = ordered.New()
	r.Comment = ""
	out, _ := ret.Value("stdout").(string)
	if out == "" {
		if e, _ := ret.Value("stderr").(string); e != "" {
			r.Comment = e
		}
		return r
	}
	data := ordered.New()
	isJSON := false
	idx := -1
	if v, err := ordered.DecodeJSON(strings.NewReader(out)); err == nil && json.Valid([]byte(out)) {
		m, ok := v.(*ordered.Map)
		if !ok {
			r.Comment, r.Result = "script JSON output must be a JSON object (e.g., {})!", states.False
			return r
		}
		data, isJSON = m, true
	} else {
		idx = strings.LastIndex(strings.TrimRight(out, " \t\r\n"), "\n")
		last := out
		if idx != -1 {
			last = out[idx+1:]
		}
		for _, item := range strings.Fields(last) {
			k, v, ok := strings.Cut(item, "=")
			if !ok || strings.Contains(v, "=") {
				r.Comment, r.Result = "Failed parsing script output! Stdout must be JSON or a line of name=value pairs.", states.False
				r.Changes = ret
				return r
			}
			data.Set(k, strings.Trim(v, `"'`))
		}
	}
	changed := false
	if v, ok := data.Get("changed"); ok {
		switch strings.ToLower(ordered.KeyString(v)) {
		case "true", "yes", "1":
			changed = true
		}
	}
	if cm, ok := data.Get("comment"); ok {
		r.Comment = ordered.KeyString(cm)
		data.Delete("comment")
	}
	if changed {
		ret.Range(func(k, v any) bool {
			if !data.Has(k) {
				data.Set(k, v)
			}
			return true
		})
		switch {
		case isJSON:
			data.Set("stdout", "")
		case idx >= 0:
			s, _ := data.Value("stdout").(string)
			if idx <= len(s) {
				data.Set("stdout", s[:idx])
			}
		default:
			data.Set("stdout", "")
		}
		r.Changes = data
	}
	return r
}
