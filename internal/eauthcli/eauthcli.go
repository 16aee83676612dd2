// Package eauthcli is the command-line side of external authentication
// for salt and salt-run: Salt's EAuthMixIn options (-a/--auth/--eauth/
// --external-auth, -T/--make-token, --username, --password), the
// credential prompts of salt.auth.Resolver.cli, and the token file the
// client config keeps (token_file, salt/config/__init__.py
// client_config).
package eauthcli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/brinesalt/brine/internal/ordered"
)

// Backends are the eauth systems Brine has (the "Available eauth types"
// Resolver.cli lists).
var Backends = []string{"auto", "file", "pam", "sharedsecret"}

// Options are EAuthMixIn's options.
type Options struct {
	Eauth     string
	MakeToken bool
	Username  string
	Password  string
}

// Register adds the options to fs.
func Register(fs *pflag.FlagSet) *Options {
	o := &Options{}
	fs.StringVarP(&o.Eauth, "auth", "a", "", "external authentication system to use")
	fs.StringVar(&o.Eauth, "eauth", "", "alias of --auth")
	fs.StringVar(&o.Eauth, "external-auth", "", "alias of --auth")
	fs.BoolVarP(&o.MakeToken, "make-token", "T", false, "make and save an eauth token for re-use (for token_expire)")
	fs.StringVar(&o.Username, "username", "", "username for external authentication")
	fs.StringVar(&o.Password, "password", "", "password for external authentication (visible to other users in the process list: leave it out to be prompted)")
	return o
}

// Creds are the credentials to send: a token, or eauth credentials (the
// fields of master.Creds, so the caller converts).
type Creds struct{ Token, Eauth, Username, Password string }

// Terminal is where prompts are read and written.
type Terminal struct {
	Stdin          *bufio.Reader
	Stdout, Stderr io.Writer
	// OpenTTY opens the controlling terminal, as getpass does; nil is
	// /dev/tty. When it fails the password is read from Stdin with
	// getpass's warning.
	OpenTTY func() (*os.File, error)
}

// ErrAuthFailed is Resolver.cli answering nothing: the eauth system is
// not one Brine has (the CLI says "ERROR: Authentication failed").
//
//lint:ignore ST1005 Salt's message (salt/cli/salt.py)
var ErrAuthFailed = errors.New("Authentication failed")

// Prompt is Resolver.cli for the auth(username, password) functions of
// every Brine backend: a value given as an option is used, the password
// is read as getpass reads it (from the terminal without echo), the
// username as input() reads it, and an empty username is the current
// user.
func (o *Options) Prompt(t *Terminal) (Creds, error) {
	if !knownBackend(o.Eauth) {
		fmt.Fprintf(t.Stdout, "The specified external authentication system \"%s\" is not available\n", o.Eauth)
		fmt.Fprintf(t.Stdout, "Available eauth types: %s\n", strings.Join(Backends, ", "))
		return Creds{}, ErrAuthFailed
	}
	c := Creds{Eauth: o.Eauth, Username: o.Username, Password: o.Password}
	var err error
	if c.Username == "" {
		fmt.Fprint(t.Stdout, "username: ")
		if c.Username, err = readLine(t.Stdin); err != nil {
			return Creds{}, fmt.Errorf("read username: %w", err)
		}
	}
	if o.Password == "" {
		if c.Password, err = getpass(t, "password: "); err != nil {
			return Creds{}, fmt.Errorf("read password: %w", err)
		}
	}
	if c.Username == "" {
		if u, err := user.Current(); err == nil {
			c.Username = u.Username
		}
	}
	return c, nil
}

func knownBackend(name string) bool {
	for _, b := range Backends {
		if b == name {
			return true
		}
	}
	return false
}

// readLine reads one line without its end; end of input before any
// character is an error, as input() raises EOFError.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// getpass is Python's getpass.getpass: the prompt on the controlling
// terminal and the password read from it without echo; without a
// terminal, a warning and the prompt on stderr and a line of stdin.
func getpass(t *Terminal, prompt string) (string, error) {
	open := t.OpenTTY
	if open == nil {
		open = func() (*os.File, error) { return os.OpenFile("/dev/tty", os.O_RDWR, 0) }
	}
	if tty, err := open(); err == nil {
		defer tty.Close()
		if term.IsTerminal(int(tty.Fd())) {
			fmt.Fprint(tty, prompt)
			b, err := term.ReadPassword(int(tty.Fd()))
			fmt.Fprintln(tty)
			return string(b), err
		}
	}
	fmt.Fprintln(t.Stderr, "GetPassWarning: Can not control echo on the terminal.")
	fmt.Fprintln(t.Stderr, "Warning: Password input may be echoed.")
	fmt.Fprint(t.Stderr, prompt)
	return readLine(t.Stdin)
}

// TokenFile is the client's token_file: the option when set, else
// salt_token in $XDG_CONFIG_HOME/salt (~/.config/salt) when that
// directory exists, else ~/salt_token (client_config).
func TokenFile(raw *ordered.Map) string {
	if p, _ := raw.Value("token_file").(string); p != "" {
		return expandHome(p)
	}
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		xdg = filepath.Join(home, ".config")
	}
	if st, err := os.Stat(filepath.Join(xdg, "salt")); err == nil && st.IsDir() {
		return filepath.Join(xdg, "salt", "salt_token")
	}
	return filepath.Join(home, "salt_token")
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~"); ok && (rest == "" || rest[0] == '/') {
		if home, err := os.UserHomeDir(); err == nil {
			p = home + rest
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return abs
}

// ReadToken is client_config's token: the token file's content while
// the file is younger than token_expire seconds (43200 by default),
// else "".
func ReadToken(raw *ordered.Map, now time.Time) string {
	path := TokenFile(raw)
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	expire := 43200.0
	if v, ok := ordered.Number(raw.Value("token_expire")); ok {
		expire = v
	}
	if !st.ModTime().Add(time.Duration(expire * float64(time.Second))).After(now) {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// WriteToken saves a token as Resolver.token_cli does: the token file,
// mode 0600.
func WriteToken(raw *ordered.Map, tok string) error {
	path := TokenFile(raw)
	if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
		return fmt.Errorf("save token: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("save token: %w", err)
	}
	return nil
}

// Resolve is what salt and salt-run do before calling the master
// (salt/cli/salt.py, salt/runner.py run). Without -a the answer is the
// zero Creds, the local root user. With -a a saved token that is still
// fresh is sent (Salt's non-root users send it; its root sends the
// .root_key instead, which Brine's root-only socket does not have);
// otherwise the credentials are prompted for and, with -T, traded for a
// token (mk) that is saved. A token that cannot be saved is reported on
// stderr and still used.
func (o *Options) Resolve(ctx context.Context, raw *ordered.Map, t *Terminal,
	mk func(context.Context, Creds) (string, error)) (Creds, error) {
	if o.Eauth == "" {
		return Creds{}, nil
	}
	if tok := ReadToken(raw, time.Now()); tok != "" {
		return Creds{Token: tok}, nil
	}
	c, err := o.Prompt(t)
	if err != nil {
		return Creds{}, err
	}
	if o.MakeToken {
		// token_cli: a failed mk_token leaves the credentials to be
		// sent as they are, and the master refuses them.
		if tok, err := mk(ctx, c); err == nil && tok != "" {
			if err := WriteToken(raw, tok); err != nil {
				fmt.Fprintln(t.Stderr, err)
			}
			c.Token = tok
		}
	}
	return c, nil
}
