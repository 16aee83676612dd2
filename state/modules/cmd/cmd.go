// Package cmd is Salt's cmd execution module (salt/modules/cmdmod.py):
// running commands with Salt's options for working directory, user,
// environment, shell, stdin, timeout, umask and return-code handling.
//
// Not supported: template= (no renderer in the thin binary yet; it is
// an error), use_vt (commands run without a terminal). On Windows,
// password= logs runas on and encoded_cmd= passes the command to
// PowerShell as -EncodedCommand; elsewhere both are accepted and ignored,
// as cmdmod ignores them there.
package cmd

import (
	"context"
	"os/exec"
	"strings"

	"github.com/brinesalt/brine/state/modules"
)

const (
	runSig = `cmd, cwd=None, stdin=None, runas=None, group=None, shell=DEFAULT_SHELL, python_shell=None, env=None,
clean_env=False, template=None, rstrip=True, umask=None, output_encoding=None, output_loglevel="debug",
log_callback=None, hide_output=False, timeout=None, reset_system_locale=True, ignore_retcode=False,
saltenv=None, use_vt=False, redirect_stderr=True, bg=False, password=None, encoded_cmd=False,
raise_err=False, prepend_path=None, success_retcodes=None, success_stdout=None, success_stderr=None, **kwargs`
	shellSig = `cmd, cwd=None, stdin=None, runas=None, group=None, shell=DEFAULT_SHELL, env=None, clean_env=False,
template=None, rstrip=True, umask=None, output_encoding=None, output_loglevel="debug", log_callback=None,
hide_output=False, timeout=None, reset_system_locale=True, ignore_retcode=False, saltenv=None, use_vt=False,
bg=False, password=None, prepend_path=None, success_retcodes=None, success_stdout=None, success_stderr=None, **kwargs`
	stdSig = `cmd, cwd=None, stdin=None, runas=None, group=None, shell=DEFAULT_SHELL, python_shell=None, env=None,
clean_env=False, template=None, rstrip=True, umask=None, output_encoding=None, output_loglevel="debug",
log_callback=None, hide_output=False, timeout=None, reset_system_locale=True, ignore_retcode=False,
saltenv=None, use_vt=False, password=None, prepend_path=None, success_retcodes=None, success_stdout=None,
success_stderr=None, **kwargs`
	allSig = `cmd, cwd=None, stdin=None, runas=None, group=None, shell=DEFAULT_SHELL, python_shell=None, env=None,
clean_env=False, template=None, rstrip=True, umask=None, output_encoding=None, output_loglevel="debug",
log_callback=None, hide_output=False, timeout=None, reset_system_locale=True, ignore_retcode=False,
saltenv=None, use_vt=False, redirect_stderr=False, password=None, encoded_cmd=False, prepend_path=None,
success_retcodes=None, success_stdout=None, success_stderr=None, **kwargs`
	retcodeSig = `cmd, cwd=None, stdin=None, runas=None, group=None, shell=DEFAULT_SHELL, python_shell=None,
env=None, clean_env=False, template=None, umask=None, output_encoding=None, output_loglevel="debug",
log_callback=None, timeout=None, reset_system_locale=True, ignore_retcode=False, saltenv=None, use_vt=False,
password=None, success_retcodes=None, success_stdout=None, success_stderr=None, **kwargs`
	scriptSig = `source, args=None, cwd=None, stdin=None, runas=None, group=None, shell=DEFAULT_SHELL,
python_shell=None, env=None, template=None, umask=None, output_encoding=None, output_loglevel="debug",
log_callback=None, hide_output=False, timeout=None, reset_system_locale=True, saltenv=None, use_vt=False,
bg=False, password=None, success_retcodes=None, success_stdout=None, success_stderr=None, **kwargs`
	bgSig = `cmd, cwd=None, runas=None, group=None, shell=DEFAULT_SHELL, python_shell=None, env=None,
clean_env=False, template=None, umask=None, timeout=None, output_encoding=None, output_loglevel="debug",
log_callback=None, reset_system_locale=True, ignore_retcode=False, saltenv=None, password=None,
prepend_path=None, success_retcodes=None, success_stdout=None, success_stderr=None, **kwargs`
)

func reg(name, doc, signature string, fn modules.Func) {
	modules.Register(modules.Function{Name: "cmd." + name, Doc: doc, Spec: sig(strings.ReplaceAll(signature, "\n", " ")), Fn: fn})
}

func init() {
	reg("run", "Run cmd and return its output, stderr merged into stdout; the job's retcode becomes the command's exit status.",
		runSig, run)
	reg("shell", "Like cmd.run, but always through the shell (python_shell=True).", shellSig,
		func(ctx context.Context, c *modules.Call) (any, error) {
			c.Args["python_shell"] = true
			return run(ctx, c)
		})
	reg("run_stdout", "Run cmd and return only its standard output.", stdSig,
		func(ctx context.Context, c *modules.Call) (any, error) {
			r, err := execute(ctx, c, modeSeparate)
			if err != nil {
				return nil, err
			}
			if c.Bool("hide_output") {
				return "", nil
			}
			return r.Value("stdout"), nil
		})
	reg("run_stderr", "Run cmd and return only its standard error.", stdSig,
		func(ctx context.Context, c *modules.Call) (any, error) {
			r, err := execute(ctx, c, modeSeparate)
			if err != nil {
				return nil, err
			}
			if c.Bool("hide_output") {
				return "", nil
			}
			return r.Value("stderr"), nil
		})
	reg("run_all", "Run cmd and return {pid, retcode, stdout, stderr}; redirect_stderr=True merges stderr into stdout.",
		allSig, runAll)
	reg("retcode", "Run cmd and return only its exit status.", retcodeSig,
		func(ctx context.Context, c *modules.Call) (any, error) {
			r, err := execute(ctx, c, modeMerged)
			if err != nil {
				return nil, err
			}
			return r.Value("retcode"), nil
		})
	reg("run_bg", "Start cmd in the background and return {pid} without waiting for it.", bgSig, runBg)
	reg("script", "Fetch a script from the file server (salt://) or a local path and run it with args; returns the cmd.run_all shape.",
		scriptSig, script)
	reg("script_retcode", "Like cmd.script, returning only the exit status.", scriptSig,
		func(ctx context.Context, c *modules.Call) (any, error) {
			r, err := script(ctx, c)
			if err != nil {
				return nil, err
			}
			return r.(interface{ Value(any) any }).Value("retcode"), nil
		})
	reg("which", "Return the path of the executable cmd, or None.", "cmd",
		func(_ context.Context, c *modules.Call) (any, error) { return which(c.Str("cmd")), nil })
	reg("which_bin", "Return the path of the first executable found among cmds, or None.", "cmds", whichBin)
	reg("has_exec", "Report whether the executable cmd is on the PATH.", "cmd",
		func(_ context.Context, c *modules.Call) (any, error) { return which(c.Str("cmd")) != nil, nil })
	reg("exec_code", "Write code to a temporary file and run it with the interpreter lang; return its stdout.",
		"lang, code, cwd=None, args=None, **kwargs", func(ctx context.Context, c *modules.Call) (any, error) {
			r, err := execCode(ctx, c)
			if err != nil {
				return nil, err
			}
			return r.Value("stdout"), nil
		})
	reg("exec_code_all", "Like cmd.exec_code, returning {pid, retcode, stdout, stderr}.",
		"lang, code, cwd=None, args=None, **kwargs", func(ctx context.Context, c *modules.Call) (any, error) {
			return execCode(ctx, c)
		})
}

// which is salt.utils.path.which: an absolute or relative path that is
// executable, or the first match on PATH.
func which(name string) any {
	if name == "" {
		return nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return nil
	}
	return p
}

func whichBin(_ context.Context, c *modules.Call) (any, error) {
	list, ok := c.Arg("cmds").([]any)
	if !ok {
		list = []any{c.Arg("cmds")}
	}
	for _, x := range list {
		if s, ok := x.(string); ok {
			if p := which(s); p != nil {
				return p, nil
			}
		}
	}
	return nil, nil
}
