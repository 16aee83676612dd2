package eauth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/py"
)

// groupsBackend is auto with groups, as pam has.
type groupsBackend struct{ groups map[string][]string }

func (groupsBackend) Authenticate(_ context.Context, _, pw string) (bool, error) {
	return pw == "good", nil
}
func (g groupsBackend) Groups(_ context.Context, u string) ([]string, error) { return g.groups[u], nil }

func newTestAuth(t *testing.T, conf string, tweak func(*Settings)) (*Auth, *time.Time) {
	t.Helper()
	ea, _, err := ParseExternalAuth(yaml(t, conf))
	if err != nil {
		t.Fatal(err)
	}
	s := Settings{ExternalAuth: ea, Backends: map[string]Backend{
		"auto": Auto{}, "pam": groupsBackend{map[string][]string{"carol": {"admins"}}}}}
	if tweak != nil {
		tweak(&s)
	}
	a := New(s, &Tokens{Dir: filepath.Join(t.TempDir(), "tokens")}, nil)
	a.maxFail = time.Millisecond // failures need not cost a second here
	now := time.Unix(1700000000, 0)
	a.now = func() time.Time { return now }
	return a, &now
}

const loadConf = `
auto:
  alice: [test.*]
pam:
  alice: [test.*]
  admins%: ['@wheel']
`

func TestMkTokenAndGet(t *testing.T) {
	ctx := context.Background()
	a, now := newTestAuth(t, loadConf, nil)
	td, err := a.MkToken(ctx, "pam", "carol", "good", nil)
	if err != nil || td == nil {
		t.Fatalf("MkToken = %v, %v", td, err)
	}
	tok := td.Value("token").(string)
	if got := py.Repr(td.Keys()); got != "['start', 'expire', 'name', 'eauth', 'groups', 'token']" {
		t.Errorf("token keys = %s", got)
	}
	if exp, _ := ordered.Number(td.Value("expire")); exp != 1700000000+43200 {
		t.Errorf("expire = %v, want start + 43200", exp)
	}
	st, err := os.Stat(filepath.Join(a.Tokens().Dir, tok))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v %v", st, err)
	}
	id := a.AuthenticateToken(tok)
	if id == nil || id.Name != "carol" || py.Repr(id.AuthList) != "['@wheel']" {
		t.Errorf("AuthenticateToken = %+v", id)
	}
	*now = now.Add(43201 * time.Second)
	if id := a.AuthenticateToken(tok); id != nil {
		t.Errorf("an expired token authenticated: %+v", id)
	}
	if _, err := os.Stat(filepath.Join(a.Tokens().Dir, tok)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the expired token file is still there: %v", err)
	}
	if td, _ := a.MkToken(ctx, "pam", "carol", "bad", nil); td != nil {
		t.Errorf("a bad password made a token: %v", td)
	}
	if td, _ := a.MkToken(ctx, "ldap", "carol", "good", nil); td != nil {
		t.Errorf("a disabled eauth made a token: %v", td)
	}
}

func TestTokenExpireOverride(t *testing.T) {
	ctx := context.Background()
	ten := 10.0
	for _, tc := range []struct {
		override any
		user     string
		want     float64
	}{
		{nil, "alice", 43200},
		{false, "alice", 43200},
		{true, "alice", 10},
		{yaml(t, "{auto: [alice]}"), "alice", 10},
		{yaml(t, "{auto: [alice]}"), "bob", 43200},
		{yaml(t, "{pam: [alice]}"), "alice", 43200},
	} {
		a, _ := newTestAuth(t, loadConf+"  bob: [x]\n", func(s *Settings) { s.UserOverride = tc.override })
		td, err := a.MkToken(ctx, "auto", tc.user, "", &ten)
		if err != nil {
			t.Fatal(err)
		}
		start, _ := ordered.Number(td.Value("start"))
		exp, _ := ordered.Number(td.Value("expire"))
		if exp-start != tc.want {
			t.Errorf("override %v for %s: lifetime %v, want %v", py.Repr(tc.override), tc.user, exp-start, tc.want)
		}
	}
}

func TestKeepACLInToken(t *testing.T) {
	ctx := context.Background()
	a, _ := newTestAuth(t, loadConf, func(s *Settings) { s.KeepACLInToken = true })
	td, _ := a.MkToken(ctx, "auto", "alice", "", nil)
	if got := py.Repr(td.Value("auth_list")); got != "['test.*']" {
		t.Errorf("auth_list = %s", got)
	}
	// A token keeps the ACL it was made with.
	a.s.ExternalAuth.Backend("auto").Entries[0].ACL = []any{"cmd.*"}
	if id := a.AuthenticateToken(td.Value("token").(string)); id == nil || py.Repr(id.AuthList) != "['test.*']" {
		t.Errorf("AuthenticateToken = %+v", id)
	}
}

func TestTokenStore(t *testing.T) {
	s := &Tokens{Dir: filepath.Join(t.TempDir(), "tokens")}
	now := time.Unix(1000, 0)
	live, err := s.Make(ordered.FromPairs("expire", 2000.0, "name", "a"))
	if err != nil {
		t.Fatal(err)
	}
	dead, _ := s.Make(ordered.FromPairs("expire", 500.0))
	noexp, _ := s.Make(ordered.FromPairs("name", "x"))
	if err := os.WriteFile(filepath.Join(s.Dir, "abcdef"), []byte("\xc1garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "../tokens/" + live, live + "/", "zz", live[:10]} {
		if _, err := s.Get(bad, now); !errors.Is(err, ErrNoToken) {
			t.Errorf("Get(%q) = %v, want ErrNoToken", bad, err)
		}
	}
	if n, err := s.Clean(now); n != 3 || err != nil {
		t.Errorf("Clean = %d, %v; want the expired, the expiry-less and the broken token removed", n, err)
	}
	left, _ := s.List()
	if len(left) != 1 || left[0] != live {
		t.Errorf("left %v, want only %s", left, live)
	}
	for _, tok := range []string{dead, noexp} {
		if _, err := s.Get(tok, now); !errors.Is(err, ErrNoToken) {
			t.Errorf("Get(%s) after Clean = %v", tok, err)
		}
	}
	if err := s.Remove(live); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(live); err != nil {
		t.Errorf("removing a removed token: %v", err)
	}
}

// TestTokenStoreCacheFollowsTheFile: Get's cache never outlives the
// token's file. A token removed behind the store's back (another
// process's logout, rm) is gone at once, a file replaced with other
// data is read again, and a cached token still expires on time.
func TestTokenStoreCacheFollowsTheFile(t *testing.T) {
	s := &Tokens{Dir: filepath.Join(t.TempDir(), "tokens")}
	now := time.Unix(1000, 0)
	tok, err := s.Make(ordered.FromPairs("expire", 2000.0, "name", "a"))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if td, err := s.Get(tok, now); err != nil || td.Value("name") != "a" {
			t.Fatalf("Get = %v, %v", td, err)
		}
	}
	// Another store over the same directory rewrites it (a new file, as
	// Make writes: a .tmp renamed over the name).
	other := &Tokens{Dir: s.Dir}
	td, _ := other.Get(tok, now)
	td.Set("name", "b")
	b, err := protocol.MarshalBin(td)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, tok+".tmp"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(s.Dir, tok+".tmp"), filepath.Join(s.Dir, tok)); err != nil {
		t.Fatal(err)
	}
	if td, err := s.Get(tok, now); err != nil || td.Value("name") != "b" {
		t.Errorf("after the file was replaced: Get = %v, %v; want name b", td, err)
	}
	if _, err := s.Get(tok, time.Unix(2001, 0)); !errors.Is(err, ErrNoToken) {
		t.Errorf("a cached token past its expiry: Get = %v, want ErrNoToken", err)
	}
	tok2, _ := s.Make(ordered.FromPairs("expire", 2000.0))
	if _, err := s.Get(tok2, now); err != nil {
		t.Fatal(err)
	}
	if err := other.Remove(tok2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(tok2, now); !errors.Is(err, ErrNoToken) {
		t.Errorf("a token removed by another store: Get = %v, want ErrNoToken", err)
	}
}
