package master

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// startEauthMaster starts a master whose config has the YAML conf
// (external_auth and friends) and dials its local socket.
func startEauthMaster(t *testing.T, conf string) (*Master, *Client, context.Context) {
	t.Helper()
	o := testOptions(t.TempDir())
	raw, err := saltyaml.Load([]byte(conf), "master")
	if err != nil {
		t.Fatal(err)
	}
	o.Raw = raw.(*ordered.Map)
	m, err := New(o, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, o.LocalSocket())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); m.Stop(); cancel() })
	return m, c, ctx
}

const autoConf = `
external_auth:
  auto:
    alice:
      - test.*
      - '@jobs'
    bob:
      - 'web*':
        - test.ping
`

func authKind(err error) string {
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae.Kind + ": " + ae.Message
	}
	if err == nil {
		return "nil"
	}
	return "other: " + err.Error()
}

// Tokens are made, read back with their perms, refused once deleted, and
// a publish with a token or credentials is checked against the ACL.
func TestSocketTokensAndPublishACL(t *testing.T) {
	_, c, ctx := startEauthMaster(t, autoConf)
	td, err := c.MkToken(ctx, Creds{Eauth: "auto", Username: "alice", Password: "x"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := td.Value("token").(string)
	if len(tok) != 64 {
		t.Fatalf("token %q: want 64 hex digits", tok)
	}
	got, err := c.GetToken(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.Value("name") != "alice" || ordered.KeyString(got.Value("perms")) != "['@jobs', 'test.*']" {
		t.Errorf("get_token = %v", got)
	}
	if _, _, err := c.Publish(ctx, PublishRequest{Tgt: "*", Fun: "test.ping", Auth: Creds{Token: tok}}); err != nil {
		t.Errorf("allowed publish: %v", err)
	}
	_, _, err = c.Publish(ctx, PublishRequest{Tgt: "*", Fun: "cmd.run", Auth: Creds{Token: tok}})
	if k := authKind(err); k != "authorization: Authorization error occurred." {
		t.Errorf("denied publish: %s", k)
	}
	if err := c.DelToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetToken(ctx, tok)
	if k := authKind(err); k != `authentication: Authentication failure of type "token" occurred.` {
		t.Errorf("deleted token: %s", k)
	}
	_, _, err = c.Publish(ctx, PublishRequest{Tgt: "*", Fun: "test.ping", Auth: Creds{Token: tok}})
	if k := authKind(err); k != "authentication: Authentication error occurred." {
		t.Errorf("publish with a deleted token: %s", k)
	}
	_, err = c.Call(ctx, "runner", CallRequest{Fun: "manage.status", Auth: Creds{Eauth: "auto", Username: "bob", Password: "x"}})
	if k := authKind(err); k != `authorization: Authentication failure of type "eauth" occurred for user bob.` {
		t.Errorf("denied runner: %s", k)
	}
	if _, err := c.Call(ctx, "runner", CallRequest{Fun: "jobs.list_jobs", Auth: Creds{Eauth: "auto", Username: "alice", Password: "x"}}); err != nil {
		t.Errorf("allowed runner: %v", err)
	}
}

func TestCredsNeverPrintSecrets(t *testing.T) {
	c := Creds{Eauth: "pam", Username: "alice", Password: "hunter2", Token: "abcdef0123"}
	var b strings.Builder
	log := slog.New(slog.NewTextHandler(&b, nil))
	log.Info("x", "creds", c)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c), b.String()} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "abcdef0123") || !strings.Contains(s, "alice") {
			t.Errorf("printed: %s", s)
		}
	}
	kw := withoutCreds(ordered.FromPairs("match", "web*", "password", "hunter2", "eauth", "pam"))
	if got := ordered.KeyString(kw); got != "{'match': 'web*'}" {
		t.Errorf("withoutCreds = %s", got)
	}
}

// publisher_acl_blacklist refuses users and modules for everyone;
// publisher_acl applies to sudo_ users when sudo_acl is on.
func TestPublisherACL(t *testing.T) {
	_, c, ctx := startEauthMaster(t, `
sudo_acl: true
publisher_acl:
  alice: [test.*]
publisher_acl_blacklist:
  users: [mallory]
  modules: ['cmd.*']
`)
	for _, tc := range []struct {
		user, fun, want string
	}{
		{"root", "test.ping", "nil"},
		{"root", "cmd.run", "authorization: Authorization error occurred."},
		{"mallory", "test.ping", "authorization: Authorization error occurred."},
		{"sudo_alice", "test.ping", "nil"},
		{"sudo_alice", "state.apply", "authorization: Authorization error occurred."},
		{"sudo_bob", "test.ping", "authentication: Authentication error occurred."},
	} {
		_, _, err := c.Publish(ctx, PublishRequest{Tgt: "*", Fun: tc.fun, User: tc.user})
		if got := authKind(err); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.user, tc.fun, got, tc.want)
		}
	}
}

// An asynchronous runner or wheel call answers {tag, jid} at once and
// fires its events as it runs in the master.
func TestAsyncCalls(t *testing.T) {
	m, c, ctx := startEauthMaster(t, "external_auth: {auto: {carol: ['@runner', '@wheel']}}")
	ch, cancel := m.Bus().Subscribe()
	defer cancel()
	carol := Creds{Eauth: "auto", Username: "carol", Password: "x"}
	for _, tc := range []struct{ kind, fun, prefix string }{
		{"runner", "jobs.list_jobs", "salt/run/"},
		{"wheel", "key.list_all", "salt/wheel/"},
		{"runner", "no.such", "salt/run/"},
	} {
		ret, err := c.Call(ctx, tc.kind, CallRequest{Fun: tc.fun, Auth: carol, Async: true})
		if err != nil {
			t.Fatalf("%s %s: %v", tc.kind, tc.fun, err)
		}
		r := ret.(*ordered.Map)
		jid, _ := r.Value("jid").(string)
		if r.Value("tag") != tc.prefix+jid || r.Len() != 2 {
			t.Errorf("%s async = %v", tc.fun, r)
		}
		deadline := time.After(10 * time.Second)
		for done := false; !done; {
			select {
			case ev := <-ch:
				if ev.Tag == tc.prefix+jid+"/ret" {
					done = true
					if ev.Data.Value("user") != "carol" || (tc.fun == "no.such") == (ev.Data.Value("success") == true) {
						t.Errorf("%s ret event = %v", tc.fun, ev.Data)
					}
				}
			case <-deadline:
				t.Fatalf("%s: no ret event", tc.fun)
			}
		}
	}
}
