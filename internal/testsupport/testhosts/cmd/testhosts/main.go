// Command testhosts starts and stops real-OpenSSH test hosts from the shell,
// for `make demo` and manual experiments (see internal/testhosts):
//
//	testhosts up -n 3 -dir DIR [-mode netns|loopback] [-no-python host3] ...
//	testhosts exec -dir DIR host1 -- cmd args...
//	testhosts down -dir DIR
//	testhosts cleanup
//
// `up` leaves the hosts running after it exits (detached sshd processes) and
// writes DIR/roster, DIR/known_hosts, DIR/key and DIR/state.json; `down`
// stops them and removes those files; `cleanup` removes whatever crashed
// runs left behind.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  testhosts up -n N -dir DIR [-mode netns|loopback] [-user NAME -password PW]
               [-no-python IDS] [-no-sudo IDS] [-sudo-password IDS]
               [-require-tty IDS] [-password-auth IDS]
  testhosts exec -dir DIR HOST -- COMMAND...
  testhosts down -dir DIR
  testhosts cleanup
IDS is a comma-separated list of host IDs (host1,host3) or "all".
`

// run is main without the process: testable.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 64
	}
	var err error
	code := 0
	switch args[0] {
	case "up":
		err = up(ctx, args[1:], stdout, stderr)
	case "down":
		err = down(ctx, args[1:], stderr)
	case "exec":
		code, err = execCmd(ctx, args[1:], stdout, stderr)
	case "cleanup":
		err = testhosts.Cleanup(ctx)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "testhosts: unknown command %q\n%s", args[0], usage)
		return 64
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "testhosts: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("testhosts "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func up(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("up", stderr)
	n := fs.Int("n", 3, "number of hosts")
	dir := fs.String("dir", "", "directory for roster, known_hosts, key and state.json (required)")
	mode := fs.String("mode", "", "netns or loopback (default: netns when possible)")
	user := fs.String("user", "", "login user (default "+testhosts.DefaultUser+")")
	password := fs.String("password", "", "login user's password (default "+testhosts.DefaultPassword+")")
	opts := map[string]*string{}
	for _, name := range []string{"no-python", "no-sudo", "sudo-password", "require-tty", "password-auth"} {
		opts[name] = fs.String(name, "", "hosts with the "+name+" option (IDs or all)")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return fmt.Errorf("up: need -dir and no arguments")
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if _, err := testhosts.Load(abs); err == nil {
		return fmt.Errorf("up: a cluster is already recorded in %s; run `testhosts down -dir %s` first", abs, abs)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	cfg := testhosts.Config{N: *n, Dir: abs, Detach: true, Mode: testhosts.Mode(*mode),
		User: *user, Password: *password,
		Logf: func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }}
	cfg.Hosts = hostOptions(*n, opts)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	c, err := testhosts.Start(ctx, cfg)
	if err != nil {
		return err
	}
	for _, h := range c.Hosts() {
		fmt.Fprintf(stdout, "%s\t%s\n", h.ID, h.Addr)
	}
	fmt.Fprintf(stdout, "roster: %s\nknown_hosts: %s\nkey: %s\ncontroller: %s\n",
		c.RosterPath(), c.KnownHostsPath(), c.KeyPath(), c.ControllerIP())
	return nil
}

// hostOptions builds per-host options from the -no-python style flags.
func hostOptions(n int, opts map[string]*string) map[string]testhosts.HostOptions {
	out := map[string]testhosts.HostOptions{}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("host%d", i)
		var o testhosts.HostOptions
		o.NoPython = listed(*opts["no-python"], id)
		o.NoSudo = listed(*opts["no-sudo"], id)
		o.SudoPassword = listed(*opts["sudo-password"], id)
		o.RequireTTY = listed(*opts["require-tty"], id)
		o.PasswordAuth = listed(*opts["password-auth"], id)
		out[id] = o
	}
	return out
}

func listed(list, id string) bool {
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == id || s == "all" {
			return true
		}
	}
	return false
}

func down(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlags("down", stderr)
	dir := fs.String("dir", "", "directory given to up (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("down: need -dir")
	}
	c, err := testhosts.Load(*dir)
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

func execCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("exec", stderr)
	dir := fs.String("dir", "", "directory given to up (required)")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	rest := fs.Args()
	if *dir == "" || len(rest) < 2 {
		return 64, fmt.Errorf("exec: need -dir DIR HOST -- COMMAND")
	}
	host, cmd := rest[0], rest[1:]
	if cmd[0] == "--" {
		cmd = cmd[1:]
	}
	if len(cmd) == 0 {
		return 64, fmt.Errorf("exec: no command")
	}
	c, err := testhosts.Load(*dir)
	if err != nil {
		return 0, err
	}
	out, err := c.Exec(ctx, host, strings.Join(cmd, " "))
	stdout.Write(out)
	var ee *testhosts.ExitError
	if errors.As(err, &ee) {
		io.WriteString(stderr, ee.Stderr)
		return ee.Code, nil
	}
	return 0, err
}
