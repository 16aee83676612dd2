package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

type outputMode int

const (
	modeMerged   outputMode = iota // stderr into stdout (cmd.run, cmd.retcode)
	modeSeparate                   // stdout and stderr apart (run_all, run_stdout)
	modeDetached                   // no output, do not wait (run_bg)
)

func run(ctx context.Context, c *modules.Call) (any, error) {
	mode := modeMerged
	if !c.Bool("redirect_stderr") {
		mode = modeSeparate
	}
	if c.Bool("bg") {
		mode = modeDetached
	}
	r, err := execute(ctx, c, mode)
	if err != nil {
		return nil, err
	}
	out, _ := r.Value("stdout").(string)
	if w, ok := r.Value("warnings").([]any); ok {
		out = strings.TrimLeft(out+"\nWARNING: "+ordered.KeyString(w[0]), "\n")
	}
	if rc, _ := r.Value("retcode").(int); rc != 0 && !c.Bool("ignore_retcode") {
		c.Env.Log.Error(fmt.Sprintf("Command '%s' failed with return code: %d", logCmd(c), rc))
		if c.Bool("raise_err") {
			if c.Bool("hide_output") {
				out = ""
			}
			return nil, &modules.ExecutionError{Msg: out}
		}
	}
	if c.Bool("hide_output") {
		return "", nil
	}
	return out, nil
}

func runAll(ctx context.Context, c *modules.Call) (any, error) {
	mode := modeSeparate
	if c.Bool("redirect_stderr") {
		mode = modeMerged
	}
	r, err := execute(ctx, c, mode)
	if err != nil {
		return nil, err
	}
	if c.Bool("hide_output") {
		r.Set("stdout", "")
		r.Set("stderr", "")
	}
	return r, nil
}

func runBg(ctx context.Context, c *modules.Call) (any, error) {
	r, err := execute(ctx, c, modeDetached)
	if err != nil {
		return nil, err
	}
	out := ordered.FromPairs("pid", r.Value("pid"))
	if w, ok := r.Get("warnings"); ok {
		out.Set("warnings", w)
	}
	return out, nil
}

func logCmd(c *modules.Call) string {
	if l, ok := c.Arg("cmd").([]any); ok {
		return py.Repr(l)
	}
	return c.Str("cmd")
}

// pythonShell is cmdmod's _python_shell_default: a job's own call (it
// carries __pub_jid) runs through the shell unless told otherwise, as
// does any call when the cmd_safe option is False.
func pythonShell(c *modules.Call) bool {
	if v, ok := c.Args["python_shell"]; ok && v != nil {
		return modules.Truthy(v)
	}
	if jid, _ := c.Pub.Value("__pub_jid").(string); jid != "" {
		return true
	}
	if v, ok := c.Env.Opts.Get("cmd_safe"); ok && v == false {
		return true
	}
	return false
}

// execute is cmdmod's _run: it prepares and runs the command and
// returns {pid, retcode, stdout, stderr}, setting the job's retcode.
func execute(ctx context.Context, c *modules.Call, mode outputMode) (*ordered.Map, error) {
	p, err := prepare(c)
	if err != nil {
		return nil, err
	}
	if mode == modeDetached {
		ret, err := p.start()
		if err == nil {
			addWarning(c, ret, guiWarning(p))
		}
		return ret, err
	}
	ret, err := p.run(ctx, mode)
	if err != nil {
		return nil, err
	}
	addWarning(c, ret, guiWarning(p))
	rc, _ := ret.Value("retcode").(int)
	if c.Bool("ignore_retcode") {
		c.Env.Context["retcode"] = 0
	} else {
		c.Env.Context["retcode"] = rc
	}
	return ret, nil
}

// addWarning logs w and keeps it in the result's "warnings" list, which
// cmd.run_all and cmd.run_bg return and cmd.run appends to its output.
func addWarning(c *modules.Call, ret *ordered.Map, w string) {
	if w == "" {
		return
	}
	c.Env.Log.Warn(w)
	ret.Set("warnings", []any{w})
}

// prepared is a command ready to start.
type prepared struct {
	argv    []string
	display string // how Salt names the command in messages
	dir     string
	env     []string
	stdin   *string
	timeout float64
	// timeoutText is str(timeout) for the timeout message.
	timeoutText string
	cred        procCred
	// cmdline is the command line passed as written (cmd.exe /c …
	// on Windows); "" builds it from argv. Only runas_windows.go sets it.
	cmdline  string //lint:ignore U1000 read and written on Windows (runas_windows.go)
	umask    int
	success  []int
	okStdout []string
	okStderr []string
	rstrip   bool
}

func prepare(c *modules.Call) (*prepared, error) {
	if t := c.Arg("template"); t != nil && modules.Truthy(t) {
		return nil, &modules.ExecutionError{Msg: fmt.Sprintf("template %s is not supported by this minion", c.Str("template"))}
	}
	p := &prepared{rstrip: true, umask: -1}
	if v, ok := c.Args["rstrip"]; ok {
		p.rstrip = modules.Truthy(v)
	}
	shell, err := checkShell(c.Str("shell"))
	if err != nil {
		return nil, err
	}
	runas := c.Str("runas")
	if runas == "" {
		runas, _ = c.Env.Context["runas"].(string)
	}
	u, err := lookupRunas(runas, c.Str("group"), c.Str("password"))
	if err != nil {
		return nil, err
	}
	p.cred = u.cred
	if err := p.setDir(c, u); err != nil {
		return nil, err
	}
	if p.env, err = buildEnv(c, u); err != nil {
		return nil, err
	}
	if err := p.setUmask(c.Arg("umask")); err != nil {
		return nil, err
	}
	if err := p.setArgv(c, shell); err != nil {
		return nil, err
	}
	if s, ok := c.Args["stdin"]; ok && s != nil {
		text := ordered.KeyString(s)
		if !modules.Truthy(c.Kwargs.Value("stdin_raw_newlines")) {
			text = strings.ReplaceAll(text, `\n`, "\n")
		}
		p.stdin = &text
	}
	if t := c.Arg("timeout"); t != nil {
		p.timeoutText = ordered.KeyString(t)
		switch x := t.(type) {
		case int:
			p.timeout = float64(x)
		case float64:
			p.timeout = x
		case string:
			p.timeout, _ = strconv.ParseFloat(x, 64)
		}
	}
	return p, p.setSuccess(c)
}

func (p *prepared) setDir(c *modules.Call, u *runasUser) error {
	cwd := c.Arg("cwd")
	if cwd == nil || cwd == "" {
		p.dir = u.home
		if p.dir == "" || !readable(p.dir) {
			p.dir = rootDir()
		}
		return nil
	}
	p.dir = ordered.KeyString(cwd)
	if st, err := os.Stat(p.dir); !filepath.IsAbs(p.dir) || err != nil || !st.IsDir() {
		return &modules.ExecutionError{Msg: fmt.Sprintf("Specified cwd '%s' either not absolute or does not exist", p.dir)}
	}
	return nil
}

func readable(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

func (p *prepared) setUmask(v any) error {
	if v == nil {
		return nil
	}
	s := strings.TrimLeft(ordered.KeyString(v), "0")
	if s == "" {
		return &modules.ExecutionError{Msg: "Zero umask is not allowed."}
	}
	n, err := strconv.ParseInt(s, 8, 32)
	if err != nil {
		return &modules.ExecutionError{Msg: fmt.Sprintf("Invalid umask: '%s'", ordered.KeyString(v))}
	}
	p.umask = int(n)
	return nil
}

// setArgv decides between the shell and a direct exec as cmdmod does:
// with python_shell a string runs as `shell -c cmd`; otherwise it is
// split with shlex rules and executed without a shell.
func (p *prepared) setArgv(c *modules.Call, shell string) error {
	if p.powerShellArgv(c, shell) {
		return nil
	}
	switch x := c.Arg("cmd").(type) {
	case []any:
		for _, a := range x {
			p.argv = append(p.argv, ordered.KeyString(a))
		}
		p.display = py.Repr(x)
	default:
		cmd := ordered.KeyString(x)
		p.display = cmd
		if pythonShell(c) {
			p.shellArgv(shell, cmd)
			return nil
		}
		if shell == "" {
			p.argv = []string{cmd}
			return nil
		}
		argv, err := py.Split(cmd)
		if err != nil {
			return &modules.ExecutionError{Msg: fmt.Sprintf("ValueError: %s", err)}
		}
		p.argv = argv
		l := make([]any, len(argv))
		for i, a := range argv {
			l[i] = a
		}
		p.display = py.Repr(l)
	}
	if len(p.argv) == 0 {
		return &modules.ExecutionError{Msg: fmt.Sprintf("Unable to run command '%s' with the context '%s', reason: list index out of range", p.display, p.dir)}
	}
	return nil
}

func (p *prepared) setSuccess(c *modules.Call) error {
	p.success = []int{0}
	if v := c.Arg("success_retcodes"); v != nil {
		p.success = nil
		for _, s := range splitInput(v) {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return &modules.InvocationError{Msg: "success_retcodes must be a list of integers"}
			}
			p.success = append(p.success, n)
		}
	}
	if v := c.Arg("success_stdout"); v != nil {
		p.okStdout = splitInput(v)
	}
	if v := c.Arg("success_stderr"); v != nil {
		p.okStderr = splitInput(v)
	}
	return nil
}

// splitInput is salt.utils.args.split_input: a list as is, otherwise
// the comma-separated parts of its string form.
func splitInput(v any) []string {
	if l, ok := v.([]any); ok {
		out := make([]string, len(l))
		for i, x := range l {
			out[i] = ordered.KeyString(x)
		}
		return out
	}
	parts := strings.Split(ordered.KeyString(v), ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func (p *prepared) command(ctx context.Context) (*exec.Cmd, error) {
	path, err := lookPathIn(p.argv[0], p.env)
	if err != nil {
		return nil, &modules.ExecutionError{Msg: fmt.Sprintf(
			"Unable to run command '%s' with the context '{'cwd': '%s', 'shell': False}', reason: [Errno 2] No such file or directory: '%s'",
			p.display, p.dir, p.argv[0])}
	}
	cmd := exec.CommandContext(ctx, path, p.argv[1:]...)
	cmd.Args[0] = p.argv[0]
	cmd.Dir, cmd.Env = p.dir, p.env
	p.sysProc(cmd)
	cmd.WaitDelay = time.Second
	if p.stdin != nil {
		cmd.Stdin = strings.NewReader(*p.stdin)
	}
	return cmd, nil
}

func (p *prepared) run(ctx context.Context, mode outputMode) (*ordered.Map, error) {
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(p.timeout*float64(time.Second)))
		defer cancel()
	}
	cmd, err := p.command(ctx)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if mode == modeMerged {
		cmd.Stderr = &stdout
	}
	if err := p.startWithUmask(cmd); err != nil {
		return nil, &modules.ExecutionError{Msg: fmt.Sprintf("Unable to run command '%s' with the context '{'cwd': '%s'}', reason: %s", p.display, p.dir, err)}
	}
	waitErr := cmd.Wait()
	pid := cmd.Process.Pid
	if ctx.Err() != nil && p.timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ordered.FromPairs("pid", pid, "retcode", 1,
			"stdout", fmt.Sprintf("%s : Timed out after %s seconds", p.display, p.timeoutText),
			"stderr", ""), nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rc := exitCode(cmd.ProcessState)
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return nil, &modules.ExecutionError{Msg: fmt.Sprintf("Unable to run command '%s': %s", p.display, waitErr)}
	}
	out, errText := decode(stdout.Bytes()), decode(stderr.Bytes())
	if p.rstrip {
		out, errText = rstrip(out), rstrip(errText)
	}
	for _, ok := range p.success {
		if rc == ok {
			rc = 0
		}
	}
	for _, s := range p.okStdout {
		if strings.Contains(out, s) {
			rc = 0
		}
	}
	for _, s := range p.okStderr {
		if strings.Contains(errText, s) {
			rc = 0
		}
	}
	return ordered.FromPairs("pid", pid, "retcode", rc, "stdout", out, "stderr", errText), nil
}

// start runs the command detached (cmd.run_bg) and returns its pid.
func (p *prepared) start() (*ordered.Map, error) {
	cmd, err := p.command(context.WithoutCancel(context.Background()))
	if err != nil {
		return nil, err
	}
	detach(cmd)
	if err := p.startWithUmask(cmd); err != nil {
		return nil, &modules.ExecutionError{Msg: fmt.Sprintf("Unable to run command '%s': %s", p.display, err)}
	}
	pid := cmd.Process.Pid
	go cmd.Wait() //nolint:errcheck // reap the child; its status is not reported
	return ordered.FromPairs("pid", pid), nil
}

// decode turns output into text as Salt does, replacing invalid UTF-8.
func decode(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// rstrip is Python's str.rstrip(): trailing whitespace, Unicode included.
func rstrip(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }
