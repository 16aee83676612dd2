package eauthcli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/brinesalt/brine/internal/ordered"
)

// The option table is EAuthMixIn's (salt/utils/parsers.py).
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Options
	}{
		{[]string{"-a", "pam"}, Options{Eauth: "pam"}},
		{[]string{"--auth", "pam", "-T"}, Options{Eauth: "pam", MakeToken: true}},
		{[]string{"--eauth=file", "--make-token"}, Options{Eauth: "file", MakeToken: true}},
		{[]string{"--external-auth", "auto", "--username", "u", "--password", "p"}, Options{Eauth: "auto", Username: "u", Password: "p"}},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o := Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if *o != tc.want {
			t.Errorf("%v = %+v, want %+v", tc.args, *o, tc.want)
		}
	}
}

func noTTY() (*os.File, error) { return nil, errors.New("no tty") }

func terminal(in string) (*Terminal, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Terminal{Stdin: bufio.NewReader(strings.NewReader(in)), Stdout: &out, Stderr: &errb, OpenTTY: noTTY}, &out, &errb
}

func TestPrompt(t *testing.T) {
	tm, out, errb := terminal("alice\ns3cret\n")
	c, err := (&Options{Eauth: "pam"}).Prompt(tm)
	if err != nil || c != (Creds{Eauth: "pam", Username: "alice", Password: "s3cret"}) {
		t.Fatalf("Prompt = %+v, %v", c, err)
	}
	if out.String() != "username: " || !strings.HasSuffix(errb.String(), "Warning: Password input may be echoed.\npassword: ") {
		t.Errorf("prompts: stdout %q stderr %q", out, errb)
	}
	tm, out, _ = terminal("")
	c, err = (&Options{Eauth: "auto", Username: "bob", Password: "x"}).Prompt(tm)
	if err != nil || c.Username != "bob" || c.Password != "x" || out.Len() != 0 {
		t.Errorf("options given: %+v, %v, prompted %q", c, err, out)
	}
	tm, _, _ = terminal("\npw\n")
	if c, err := (&Options{Eauth: "auto"}).Prompt(tm); err != nil || c.Username == "" {
		t.Errorf("empty username is the current user: %+v, %v", c, err)
	}
	tm, _, _ = terminal("alice\n")
	if _, err := (&Options{Eauth: "auto"}).Prompt(tm); err == nil {
		t.Error("end of input at the password prompt: no error")
	}
	tm, out, _ = terminal("")
	if _, err := (&Options{Eauth: "ldap"}).Prompt(tm); !errors.Is(err, ErrAuthFailed) ||
		out.String() != "The specified external authentication system \"ldap\" is not available\nAvailable eauth types: auto, file, pam, sharedsecret\n" {
		t.Errorf("unknown eauth: %v, %q", err, out)
	}
}

func TestTokenFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	raw := ordered.New()
	if got := TokenFile(raw); got != filepath.Join(home, "salt_token") {
		t.Errorf("TokenFile = %s", got)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config", "salt"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := TokenFile(raw); got != filepath.Join(home, ".config", "salt", "salt_token") {
		t.Errorf("TokenFile with ~/.config/salt = %s", got)
	}
	raw.Set("token_file", "~/tok")
	if got := TokenFile(raw); got != filepath.Join(home, "tok") {
		t.Errorf("TokenFile with token_file = %s", got)
	}
	if err := WriteToken(raw, "abc123"); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(home, "tok"))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", st.Mode())
	}
	if got := ReadToken(raw, time.Now()); got != "abc123" {
		t.Errorf("ReadToken = %q", got)
	}
	raw.Set("token_expire", 60)
	if got := ReadToken(raw, time.Now().Add(61*time.Second)); got != "" {
		t.Errorf("ReadToken after token_expire = %q", got)
	}
}

func TestResolve(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	raw := ordered.New()
	calls := 0
	mk := func(_ context.Context, c Creds) (string, error) {
		calls++
		if c.Password != "good" {
			return "", errors.New("refused")
		}
		return "feedface", nil
	}
	ctx := context.Background()
	if c, err := (&Options{}).Resolve(ctx, raw, nil, mk); err != nil || c != (Creds{}) {
		t.Errorf("no -a: %+v, %v", c, err)
	}
	tm, _, _ := terminal("alice\nbad\n")
	c, err := (&Options{Eauth: "auto", MakeToken: true}).Resolve(ctx, raw, tm, mk)
	if err != nil || c.Token != "" || c.Password != "bad" {
		t.Errorf("refused mk_token: %+v, %v (the credentials are sent as they are)", c, err)
	}
	tm, _, _ = terminal("alice\ngood\n")
	c, err = (&Options{Eauth: "auto", MakeToken: true}).Resolve(ctx, raw, tm, mk)
	if err != nil || c.Token != "feedface" {
		t.Errorf("-T: %+v, %v", c, err)
	}
	tm, out, _ := terminal("")
	c, err = (&Options{Eauth: "auto"}).Resolve(ctx, raw, tm, mk)
	if err != nil || c != (Creds{Token: "feedface"}) || out.Len() != 0 || calls != 2 {
		t.Errorf("saved token: %+v, %v, prompted %q, %d mk_token calls", c, err, out, calls)
	}
}
