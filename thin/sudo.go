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
	"syscall"
	"unsafe"
)

// The sudo subcommand runs `call` (or any thin command) through sudo on
// the target. It replaces salt-ssh's scraping of a sudo prompt through a
// pty (salt/client/ssh/shell.py):
//
//   - A password, when one is needed, is the first line of stdin. It goes
//     to sudo through SUDO_ASKPASS, pointing back at this binary, and an
//     environment variable that only this user's processes can read: never
//     argv, never a file, never the job. sudo's env_reset keeps it from
//     the command.
//   - With --tty (sudo's requiretty), sudo gets a fresh pty as its
//     controlling terminal, while stdin and stdout stay pipes, so the
//     result frame passes through untouched.
const (
	askpassEnv  = "BRINE_ASKPASS"
	passwordEnv = "BRINE_SUDO_PASSWORD"
)

func init() {
	Register(Command{Name: "sudo", Summary: "run a thin command through sudo (password on the first stdin line with --password)", Run: runSudo})
}

// askpass answers sudo's password request when this binary runs as
// SUDO_ASKPASS; it reports whether it did.
func askpass(stdout io.Writer) bool {
	if os.Getenv(askpassEnv) != "1" {
		return false
	}
	fmt.Fprintln(stdout, os.Getenv(passwordEnv))
	return true
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
	args := []string{"-n"}
	env := os.Environ()
	if *password {
		line, err := readLine(inv.Stdin)
		if err != nil && line == "" {
			fmt.Fprintln(inv.Stderr, "salt-thin sudo: no password on stdin")
			return ExUsage
		}
		args = []string{"-A", "-p", ""}
		env = append(env, "SUDO_ASKPASS="+self, askpassEnv+"=1", passwordEnv+"="+strings.TrimRight(line, "\r"))
	}
	if *user != "" {
		args = append(args, "-u", *user)
	}
	args = append(args, "--")
	if *path != "" {
		args = append(args, "env", "PATH="+*path)
	}
	args = append(append(args, self), fs.Args()...)
	cmd := exec.CommandContext(ctx, "sudo", args...)
	// The job follows the password on stdin: sudo's command reads it
	// from the same file, which stays open while the controller may still
	// write (a waiting probe's session), so no copy must wait for its end.
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, inv.Stdin, inv.Stdout, inv.Stderr
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
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	}
	err = cmd.Run()
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

// openPTY opens a pseudo-terminal pair through /dev/ptmx, without cgo.
func openPTY() (ptmx, pts *os.File, err error) {
	ptmx, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var n uint32
	if err := ioctl(ptmx, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); err != nil {
		ptmx.Close()
		return nil, nil, fmt.Errorf("TIOCGPTN: %w", err)
	}
	var unlock int32
	if err := ioctl(ptmx, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); err != nil {
		ptmx.Close()
		return nil, nil, fmt.Errorf("TIOCSPTLCK: %w", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ptmx.Close()
		return nil, nil, err
	}
	return ptmx, pts, nil
}

func ioctl(f *os.File, req, arg uintptr) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, arg); errno != 0 {
		return errno
	}
	return nil
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
