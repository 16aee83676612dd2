package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/brinesalt/brine/internal/testsupport/pamtest"
	"github.com/brinesalt/brine/master"
)

// startEauthCluster starts a master with conf and the minions web1 and
// db1, accepted and answering.
func startEauthCluster(t *testing.T, s clustertest.Setup, ids ...string) *clustertest.Cluster {
	t.Helper()
	c := clustertest.NewSetup(t, s)
	for _, id := range ids {
		c.StartMinion(id, c.MinionConf(id, id, ""))
	}
	c.WaitFor("pending keys", func() bool {
		out, _ := c.Run("salt-key", "-L")
		for _, id := range ids {
			if !strings.Contains(out, "\n"+id+"\n") {
				return false
			}
		}
		return true
	})
	if out, code := c.Run("salt-key", "-A", "-y"); code != 0 {
		t.Fatalf("salt-key -A: %d %s", code, out)
	}
	c.PingUntil("*", ids...)
	return c
}

// saltAs runs tool with credentials typed at its prompts (stdin, as
// getpass falls back to without a terminal) and HOME in home.
func saltAs(c *clustertest.Cluster, home, input, tool string, args ...string) (string, int) {
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "xdg")}
	return c.RunInput(input, env, tool, args...)
}

func mustContain(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: want %q in\n%s", what, w, out)
		}
	}
}

func TestEauthEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	users := filepath.Join(t.TempDir(), "users.txt")
	if err := os.WriteFile(users, []byte("dean:goneFishing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := `external_auth:
  auto:
    alice: [test.*, '@jobs']
    bob: [{web1: [test.ping]}]
    carol: ['@wheel', '@runner']
    erin: [{'*': [{test.echo: {args: ['hello.*']}}]}]
  file:
    ^filename: ` + users + `
    dean: [test.ping]
`
	c := startEauthCluster(t, clustertest.Setup{MasterConf: conf}, "web1", "db1")
	home := t.TempDir()

	t.Run("auto through salt -a", func(t *testing.T) {
		out, code := saltAs(c, home, "alice\nanything\n", "salt", "-a", "auto", "*", "test.ping")
		if code != 0 {
			t.Errorf("exit %d", code)
		}
		mustContain(t, "alice test.ping", out, "username: ", "password: ", "web1:\n    True", "db1:\n    True")
	})

	t.Run("a denied function publishes nothing", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ev := dialMaster(t, ctx, c)
		events, err := ev.Events(ctx)
		if err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(t.TempDir(), "ran")
		out, code := saltAs(c, home, "alice\nx\n", "salt", "-a", "auto", "web1", "cmd.run", "touch "+marker)
		if code != 0 || !strings.Contains(out, "Authorization error occurred.") {
			t.Errorf("denied cmd.run: exit %d\n%s", code, out)
		}
		// A job published after the refusal reaches the minion and
		// returns; the refused one never ran and was never announced.
		c.PingUntil("web1", "web1")
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the denied command ran on the minion: %v", err)
		}
		cancel()
		for e := range events {
			if strings.HasSuffix(e.Tag, "/new") && e.Data.Value("fun") == "cmd.run" {
				t.Errorf("the denied job was announced: %s %v", e.Tag, e.Data)
			}
		}
		if out, _ := c.Run("salt-run", "jobs.list_jobs"); strings.Contains(out, "cmd.run") {
			t.Errorf("the denied job is in the job cache:\n%s", out)
		}
	})

	t.Run("per-target and argument ACLs", func(t *testing.T) {
		for _, tc := range []struct {
			input string
			args  []string
			want  string
		}{
			{"bob\nx\n", []string{"web1", "test.ping"}, "web1:\n    True"},
			{"bob\nx\n", []string{"*", "test.ping"}, "Authorization error occurred."},
			{"bob\nx\n", []string{"web1", "test.version"}, "Authorization error occurred."},
			{"erin\nx\n", []string{"db1", "test.echo", "hello world"}, "db1:\n    hello world"},
			{"erin\nx\n", []string{"db1", "test.echo", "bye"}, "Authorization error occurred."},
		} {
			out, _ := saltAs(c, home, tc.input, "salt", append([]string{"-a", "auto"}, tc.args...)...)
			mustContain(t, strings.Fields(tc.input)[0]+" "+strings.Join(tc.args, " "), out, tc.want)
		}
	})

	t.Run("file eauth", func(t *testing.T) {
		out, _ := saltAs(c, home, "", "salt", "-a", "file", "--username", "dean", "--password", "goneFishing", "web1", "test.ping")
		mustContain(t, "dean, right password", out, "web1:\n    True")
		out, _ = saltAs(c, home, "dean\nwrong\n", "salt", "-a", "file", "web1", "test.ping")
		mustContain(t, "dean, wrong password", out, "Authentication error occurred.")
		out, code := saltAs(c, home, "", "salt", "-a", "ldap", "web1", "test.ping")
		if code != 2 {
			t.Errorf("unknown eauth: exit %d", code)
		}
		mustContain(t, "unknown eauth", out, `The specified external authentication system "ldap" is not available`, "ERROR: Authentication failed")
	})

	t.Run("tokens", func(t *testing.T) {
		th := t.TempDir()
		out, _ := saltAs(c, th, "alice\nx\n", "salt", "-a", "auto", "-T", "web1", "test.ping")
		mustContain(t, "salt -T", out, "web1:\n    True")
		tokFile := filepath.Join(th, "salt_token")
		b, err := os.ReadFile(tokFile)
		st, _ := os.Stat(tokFile)
		if err != nil || !regexp.MustCompile(`^[0-9a-f]{64}$`).Match(b) || st.Mode().Perm() != 0o600 {
			t.Fatalf("token file: %q %v %v", b, err, st)
		}
		out, _ = saltAs(c, th, "", "salt", "-a", "auto", "web1", "test.ping")
		if strings.Contains(out, "username:") || !strings.Contains(out, "web1:\n    True") {
			t.Errorf("the saved token was not used:\n%s", out)
		}
		// The master refuses a token past its expire and removes it.
		stored := filepath.Join(c.Dir, "master/cache/tokens", string(b))
		expireToken(t, stored)
		out, _ = saltAs(c, th, "", "salt", "-a", "auto", "web1", "test.ping")
		mustContain(t, "expired token", out, "Authentication error occurred.")
		if _, err := os.Stat(stored); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the expired token is still stored: %v", err)
		}
		// A token file older than token_expire is not sent: salt asks.
		old := time.Now().Add(-13 * time.Hour)
		if err := os.Chtimes(tokFile, old, old); err != nil {
			t.Fatal(err)
		}
		out, code := saltAs(c, th, "", "salt", "-a", "auto", "web1", "test.ping")
		if code != 2 || !strings.Contains(out, "username: ") {
			t.Errorf("stale token file: exit %d\n%s", code, out)
		}
	})

	t.Run("runner and wheel ACLs", func(t *testing.T) {
		out, code := saltAs(c, home, "carol\nx\n", "salt-run", "-a", "auto", "manage.up")
		if code != 0 || !strings.Contains(out, "web1") {
			t.Errorf("carol manage.up: exit %d\n%s", code, out)
		}
		out, _ = saltAs(c, home, "alice\nx\n", "salt-run", "-a", "auto", "jobs.list_jobs")
		mustContain(t, "alice jobs.list_jobs (@jobs)", out, "test.ping")
		out, _ = saltAs(c, home, "alice\nx\n", "salt-run", "-a", "auto", "manage.up")
		mustContain(t, "alice manage.up", out, `Authentication failure of type "eauth" occurred for user alice.`)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cl := dialMaster(t, ctx, c)
		ret, err := cl.Call(ctx, "wheel", master.CallRequest{Fun: "key.list_all", Auth: master.Creds{Eauth: "auto", Username: "carol", Password: "x"}})
		if err != nil {
			t.Fatalf("carol key.list_all: %v", err)
		}
		data := ret.(*ordered.Map).Value("data").(*ordered.Map)
		if data.Value("user") != "carol" || !strings.Contains(ordered.KeyString(data.Value("return")), "'web1'") {
			t.Errorf("carol key.list_all = %v", data)
		}
		_, err = cl.Call(ctx, "wheel", master.CallRequest{Fun: "key.list_all", Auth: master.Creds{Eauth: "auto", Username: "alice", Password: "x"}})
		var ae *master.AuthError
		if !errors.As(err, &ae) || ae.Message != `Authentication failure of type "eauth" occurred for user alice.` {
			t.Errorf("alice key.list_all: %v", err)
		}
	})
}

// dialMaster connects to the cluster master's local socket as root.
func dialMaster(t *testing.T, ctx context.Context, c *clustertest.Cluster) *master.Client {
	t.Helper()
	cl, err := master.Dial(ctx, filepath.Join(c.Dir, "master/sock/brine-master.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// expireToken rewrites a stored token with an expire in the past.
func expireToken(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := protocol.Decoder{BinType: true}.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	td := v.(*ordered.Map)
	td.Set("expire", float64(time.Now().Add(-time.Minute).Unix()))
	nb, err := protocol.MarshalBin(td)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nb, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPAMEndToEnd runs the master in a pamtest namespace where a real
// user exists, and authenticates it with salt -a pam and salt-run -a pam.
func TestPAMEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	f := pamtest.New(t, "brinepam3", "pam pass 3", "brinepamops3")
	conf := `auth.pam.service: ` + f.Service + `
external_auth:
  pam:
    brinepam3: [test.ping]
    brinepamops3%: ['@runner']
`
	c := startEauthCluster(t, clustertest.Setup{MasterConf: conf, MasterCommand: f.Command}, "web1")
	home := t.TempDir()
	good := f.User + "\n" + f.Password + "\n"
	out, _ := saltAs(c, home, good, "salt", "-a", "pam", "web1", "test.ping")
	mustContain(t, "pam, right password", out, "web1:\n    True")
	out, _ = saltAs(c, home, f.User+"\nwrong\n", "salt", "-a", "pam", "web1", "test.ping")
	mustContain(t, "pam, wrong password", out, "Authentication error occurred.")
	out, _ = saltAs(c, home, good, "salt", "-a", "pam", "web1", "test.version")
	mustContain(t, "pam, function not in the ACL", out, "Authorization error occurred.")
	out, code := saltAs(c, home, good, "salt-run", "-a", "pam", "manage.up")
	if code != 0 || !strings.Contains(out, "web1") {
		t.Errorf("pam manage.up through the group ACL: exit %d\n%s", code, out)
	}
	out, _ = saltAs(c, home, "root\nx\n", "salt-run", "-a", "pam", "manage.up")
	mustContain(t, "pam, root with a wrong password", out, `Authentication failure of type "eauth" occurred for user root.`)
}
