package thin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// The sudo subcommand runs `call` (or any thin command) through sudo on
// the target. It replaces salt-ssh's scraping of a sudo prompt through a
// pty (salt/client/ssh/shell.py _run_cmd):
//
//   - A password, when one is needed, is the first line of stdin. sudo
//     reads it with -S from a pipe of its own, and only when it asks for
//     it: its prompt is Salt's SUDO_PROMPT, watched for on sudo's stderr
//     as Salt watches the pty. The job follows on that pipe only once the
//     command sudo runs has said it started (see sudoConversation), so a
//     refused password is never followed by the job as another attempt,
//     and a host that needs no password never gets it at all. The
//     password is never in argv, a file or any process's environment,
//     where sudoers' !env_reset or env_keep would hand it to every child
//     of the job. Like Salt's, the watch knows only this prompt: a PAM
//     prompt sudo does not replace (not matching passprompt_regex), or
//     sudoers' passprompt_override, leaves sudo waiting until the job's
//     timeout.
//   - With --tty (sudo's requiretty), sudo gets a fresh pty as its
//     controlling terminal, while stdin and stdout stay pipes, so the
//     result frame passes through untouched.
const (
	// sudoPrompt is Salt's prompt (salt/client/ssh/shell.py SUDO_PROMPT),
	// improbable in anything else sudo or PAM print.
	sudoPrompt = "[salt:sudo:d11bd4221135c33324a6bdc09674146fbfdf519989847491e34a689369bbce23]passwd:"
	// startedLine is what the command sudo runs prints first on stderr
	// (the sudo-started subcommand): sudo is done with stdin.
	startedLine = "[brine:sudo:started]\n"
	// legacyPasswordEnv is where earlier builds put the password for askpass;
	// Main removes it from its environment (scrubEnv).
	legacyPasswordEnv = "BRINE_SUDO_PASSWORD"
)

func init() {
	Register(Command{Name: "sudo", Summary: "run a thin command through sudo (password on the first stdin line with --password)", Run: runSudo})
	Register(Command{Name: "sudo-started", Summary: "(run by sudo) tell the sudo helper the command started, then run it", Run: runSudoStarted})
}

// scrubEnv removes the variables that carried the sudo password (and its
// askpass switch) in earlier versions, before anything of the job runs,
// so that no child of the job can inherit them.
func scrubEnv() {
	for _, k := range []string{legacyPasswordEnv, "BRINE_ASKPASS"} {
		os.Unsetenv(k)
	}
}

// runSudoStarted is the first thing sudo runs: it reports on stderr that
// authentication is over, then runs its arguments as a thin command in
// this process.
func runSudoStarted(ctx context.Context, inv *Invocation) int {
	if _, err := io.WriteString(inv.Stderr, startedLine); err != nil {
		return ExGeneric
	}
	return Main(ctx, inv.Args, inv.Stdin, inv.Stdout, inv.Stderr)
}

func runSudo(ctx context.Context, inv *Invocation) int {
	fs := flag.NewFlagSet("sudo", flag.ContinueOnError)
	fs.SetOutput(inv.Stderr)
	user := fs.String("u", "", "run as this user instead of root")
	password := fs.Bool("password", false, "the first line of stdin is the sudo password")
	tty := fs.Bool("tty", false, "give sudo a controlling terminal (requiretty)")
	path := fs.String("path", "", "PATH for the command, kept across sudo's env_reset (roster set_path)")
	if err := fs.Parse(inv.Args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(inv.Stderr, "usage: salt-thin sudo [-u user] [--password] [--tty] -- command [args]")
		return ExUsage
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin sudo: %s\n", err)
		return ExGeneric
	}
	var conv *sudoConversation
	args := []string{"-n"}
	if *password {
		line, err := readLine(inv.Stdin)
		if err != nil && line == "" {
			fmt.Fprintln(inv.Stderr, "salt-thin sudo: no password on stdin")
			return ExUsage
		}
		conv = &sudoConversation{password: []byte(strings.TrimRight(line, "\r")), job: inv.Stdin}
		args = []string{"-S", "-p", sudoPrompt}
	}
	if *user != "" {
		args = append(args, "-u", *user)
	}
	args = append(args, "--")
	if *path != "" {
		args = append(args, "env", "PATH="+*path)
	}
	args = append(args, self)
	if conv != nil {
		args = append(args, "sudo-started")
	}
	cmd := exec.CommandContext(ctx, "sudo", append(args, fs.Args()...)...)
	// Without a password the job follows on stdin: sudo's command reads
	// it from the same file, which stays open while the controller may
	// still write (a waiting probe's session), so no copy must wait for
	// its end.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inv.Stdin, inv.Stdout, inv.Stderr
	if *tty {
		ptmx, pts, err := openPTY()
		if err != nil {
			fmt.Fprintf(inv.Stderr, "salt-thin sudo: open pty: %s\n", err)
			return ExGeneric
		}
		defer ptmx.Close()
		defer pts.Close()
		go func() { _, _ = io.Copy(io.Discard, ptmx) }() // sudo's lecture, if any
		cmd.ExtraFiles = []*os.File{pts}
		setCtty(cmd)
	}
	if conv != nil {
		err = conv.run(cmd, inv.Stderr)
	} else {
		err = cmd.Run()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return ExOK
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	fmt.Fprintf(inv.Stderr, "salt-thin sudo: %s\n", err)
	return ExGeneric
}

// readLine reads up to a newline a byte at a time, leaving whatever
// follows unread for the next reader of r.
func readLine(r io.Reader) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				return string(line), nil
			}
			line = append(line, b[0])
		}
		if err != nil {
			return string(line), err
		}
	}
}
