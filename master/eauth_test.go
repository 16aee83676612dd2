package master

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// startEauthMaster starts a master whose config has the YAML conf
// (external_auth and friends) and dials its local socket.
func startEauthMaster(t *testing.T, conf string) (*Master, *Client, context.Context) {
	t.Helper()
	dir := t.TempDir()
	o := DefaultOptions()
	o.Interface, o.PublishPort, o.RetPort = "127.0.0.1", 0, 0
	o.PKIDir, o.CacheDir, o.SockDir = dir+"/pki", dir+"/cache", dir+"/sock"
	o.MaxMessage = 1 << 20
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
