package roster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAdHocFallback(t *testing.T) {
	cfg := testConfig()
	cfg.Options.Passwd = "pw"
	cfg.Reachable = func(_ context.Context, h string) bool { return h != "nxdomain.invalid" }
	f, err := ParseFlat(context.Background(), []byte("web1:\n  host: 10.0.0.5\n  user: deploy\n"), "roster", cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &AdHoc{Roster: f, Config: cfg}
	adhoc := func(id, user string) Target {
		t := base(id, id, 0)
		t.File, t.User, t.Passwd = "", user, "pw"
		return t
	}
	inRoster := base("web1", "10.0.0.5", 1)
	inRoster.User, inRoster.Passwd = "deploy", "pw"
	tests := []struct {
		tgt, typ string
		want     []Target
	}{
		{"web1", "glob", []Target{inRoster}},
		{"admin@web1", "glob", []Target{inRoster}},
		{"10.0.0.9", "glob", []Target{adhoc("10.0.0.9", "root")}},
		{"admin@db.example.com", "glob", []Target{adhoc("db.example.com", "admin")}},
		{"nxdomain.invalid", "glob", nil},
		{"db*", "glob", nil},
		{"10.0.0.9", "list", nil},
	}
	for _, tc := range tests {
		t.Run(tc.tgt, func(t *testing.T) {
			got, err := r.Targets(context.Background(), tc.tgt, tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpTarget); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

type fixed []Target

func (f fixed) Targets(context.Context, string, string) ([]Target, error) { return f, nil }

func TestRegistry(t *testing.T) {
	reg := NewRegistry()
	reg.Register("one", func(context.Context, Config) (Roster, error) {
		return fixed{{ID: "a", Host: "1"}, {ID: "b", Host: "1"}}, nil
	})
	reg.Register("two", func(context.Context, Config) (Roster, error) {
		return fixed{{ID: "b", Host: "2"}, {ID: "c", Host: "2"}}, nil
	})
	func() {
		defer func() {
			if recover() == nil {
				t.Error("duplicate Register did not panic")
			}
		}()
		reg.Register("one", func(context.Context, Config) (Roster, error) { return nil, nil })
	}()
	if diff := cmp.Diff([]string{"one", "two"}, reg.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	r, err := reg.Open(context.Background(), "one, two", testConfig())
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Targets(context.Background(), "*", "glob")
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{{ID: "a", Host: "1"}, {ID: "b", Host: "2"}, {ID: "c", Host: "2"}}
	if diff := cmp.Diff(want, got, cmpTarget); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	if _, err := reg.Open(context.Background(), "nope", testConfig()); !errors.Is(err, ErrUnknownBackend) {
		t.Errorf("Open(nope) err = %v, want ErrUnknownBackend", err)
	}
	if !contains(Backends(), "flat") {
		t.Errorf("global Backends() = %v, want flat registered", Backends())
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func TestUpdateRoster(t *testing.T) {
	cfg := testConfig()
	cfg.File = filepath.Join(t.TempDir(), "roster")
	cfg.Options.Passwd = "pw"
	cfg.UpdateRoster = true
	cfg.Reachable = func(context.Context, string) bool { return true }
	t.Setenv("LOGNAME", "ops")
	if err := os.WriteFile(cfg.File, []byte("web1: 10.0.0.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), "flat", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Targets(context.Background(), "deploy@10.0.0.9", "glob"); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^web1: 10.0.0.5\n# Automatically added by "ops" at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\n10.0.0.9:\n    host: 10.0.0.9\n    user: deploy\n    passwd: pw\n$`)
	if !re.Match(src) {
		t.Fatalf("roster after update:\n%s", src)
	}
	f, err := ParseFlat(context.Background(), src, cfg.File, cfg)
	if err != nil || len(f.Entries) != 2 || f.Entries[1].Target.User != "deploy" {
		t.Fatalf("updated roster does not parse back: %v %v", f, err)
	}
	if got := pyISOFormat(time.Date(2026, 12, 1, 1, 2, 3, 0, time.UTC)); got != "2026-12-01T01:02:03" {
		t.Errorf("pyISOFormat = %q", got)
	}
}

// TestAppendTargetRoundTrip writes passwords that break an unquoted YAML
// value and reads them back through the flat roster loader.
func TestAppendTargetRoundTrip(t *testing.T) {
	cfg := testConfig()
	for _, pw := range []string{"a: b", "#x", "'", `"`, "*star", "&anchor", "yes", "1.0", "0777", "null", "~",
		"- dash", "{x}", "[x]", "tab\there", "line\nbreak", " lead", "trail ", "%x", "@x", "`x", "a #b",
		strings.Repeat("long password ", 8), ""} {
		file := filepath.Join(t.TempDir(), "roster")
		target := Target{ID: "10.0.0.9", Host: "10.0.0.9", User: "de: ploy", Passwd: Secret(pw)}
		if err := AppendTarget(file, target, "ops", time.Now()); err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ParseFlat(context.Background(), src, file, cfg)
		if err != nil || len(f.Entries) != 1 {
			t.Errorf("password %q: roster does not load back: %v\n%s", pw, err, src)
			continue
		}
		got := f.Entries[0].Target
		if got.ID != target.ID || got.Host != target.Host || got.User != target.User || got.Passwd.Reveal() != pw {
			t.Errorf("password %q: read back id %q host %q user %q passwd %q\n%s", pw, got.ID, got.Host, got.User, got.Passwd.Reveal(), src)
		}
	}
}
