package beacons

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/beacons"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

type fakeMinion struct{ b *beacons.Manager }

func (f fakeMinion) Beacons() *beacons.Manager         { return f.b }
func (fakeMinion) RefreshPillar(context.Context) error { return nil }
func (fakeMinion) RefreshGrains(context.Context) error { return nil }

func call(t *testing.T, e *modules.Env, fun string, args []any, kw ...any) any {
	t.Helper()
	out, err := e.Run(t.Context(), fun, args, ordered.FromPairs(kw...))
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	return out
}

func comment(v any) any { return v.(*ordered.Map).Value("comment") }

func TestManage(t *testing.T) {
	dir := t.TempDir()
	m := beacons.New(beacons.Options{Env: &beacons.Env{ID: "m1"}})
	e := &modules.Env{Registry: modules.Default, Minion: fakeMinion{m},
		Opts: ordered.FromPairs("conf_file", filepath.Join(dir, "minion"))}
	watch := []any{ordered.FromPairs("files", ordered.FromPairs("/etc/fstab", ordered.FromPairs("mask", []any{"modify"})))}
	if got := call(t, e, "beacons.add", []any{"inotify", watch}); comment(got) != "Added beacon: inotify." {
		t.Fatalf("add: %v", got)
	}
	if got := call(t, e, "beacons.add", []any{"inotify", watch}); comment(got) != "Beacon inotify is already configured." {
		t.Fatalf("add again: %v", got)
	}
	bad := []any{ordered.FromPairs("files", "x")}
	if got := call(t, e, "beacons.add", []any{"inotify2", bad}, "beacon_module", "inotify"); !strings.HasPrefix(comment(got).(string), "Beacon ") {
		t.Fatalf("bad add: %v", got)
	}
	if got := call(t, e, "beacons.add", []any{"nosuch", []any{}}); comment(got) != `Beacon "nosuch" is not available.` {
		t.Fatalf("unknown: %v", got)
	}
	want := "beacons:\n  inotify:\n  - files:\n      /etc/fstab:\n        mask:\n        - modify\n"
	if got := call(t, e, "beacons.list", nil); got != want {
		t.Fatalf("list:\n%s\nwant\n%s", got, want)
	}
	if got := call(t, e, "beacons.disable_beacon", []any{"inotify"}); comment(got) != "Disabled beacon inotify on minion." {
		t.Fatalf("disable_beacon: %v", got)
	}
	if got := call(t, e, "beacons.enable_beacon", []any{"inotify"}); comment(got) != "Enabled beacon inotify on minion." {
		t.Fatalf("enable_beacon: %v", got)
	}
	mod := []any{ordered.FromPairs("files", ordered.FromPairs("/etc/hosts", ordered.FromPairs("mask", []any{"modify"})))}
	got := call(t, e, "beacons.modify", []any{"inotify", mod})
	if comment(got) != "Modified beacon: inotify." || !strings.Contains(got.(*ordered.Map).Value("changes").(*ordered.Map).Value("diff").(string), "+files:") {
		t.Fatalf("modify: %v", got)
	}
	if got := call(t, e, "beacons.save", nil); !strings.HasPrefix(comment(got).(string), "Beacons saved to ") {
		t.Fatalf("save: %v", got)
	}
	b, err := os.ReadFile(filepath.Join(dir, "minion.d", "beacons.conf"))
	if err != nil || !strings.Contains(string(b), "/etc/hosts") {
		t.Fatalf("beacons.conf: %s %v", b, err)
	}
	if got := call(t, e, "beacons.disable", nil); comment(got) != "Disabled beacons on minion." {
		t.Fatalf("disable: %v", got)
	}
	if got := call(t, e, "beacons.delete", []any{"inotify"}); comment(got) != "Deleted beacon: inotify." {
		t.Fatalf("delete: %v", got)
	}
	avail := call(t, e, "beacons.list_available", nil, "return_yaml", false).([]any)
	if len(avail) != 9 || avail[0] != "btmp" {
		t.Fatalf("list_available %v", avail)
	}
}

func TestWithoutMinion(t *testing.T) {
	e := &modules.Env{Registry: modules.Default, Opts: ordered.New()}
	if got := call(t, e, "beacons.list", nil); got != "beacons: {}\n" {
		t.Fatalf("list %q", got)
	}
	watch := []any{ordered.FromPairs("files", ordered.FromPairs("/etc/fstab", ordered.FromPairs("mask", []any{"modify"})))}
	if got := call(t, e, "beacons.add", []any{"inotify", watch}); comment(got) != "Event module not available. Beacon validation failed." {
		t.Fatalf("add %v", got)
	}
}
