package group

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

func sbin(n string) string { return "/usr/sbin/" + n }

func newEnv(m *Module) *modules.Env {
	r := modules.NewRegistry()
	Register(r, m)
	return (&modules.Env{Registry: r, Context: map[string]any{}}).WithGrains(ordered.FromPairs("kernel", "Linux", "os_family", "Debian"))
}

const groupFile = "root:x:0:\nadm:x:4:syslog,alice\nalice:x:1000:\n"

func TestGroupCommands(t *testing.T) {
	tests := []struct {
		fun      string
		args     []any
		want     any
		commands []string
	}{
		{"group.add", []any{"web", 1500, true}, true, []string{"/usr/sbin/groupadd -g 1500 -r web"}},
		{"group.add", []any{"web"}, true, []string{"/usr/sbin/groupadd web"}},
		{"group.delete", []any{"web"}, true, []string{"/usr/sbin/groupdel web"}},
		{"group.adduser", []any{"adm", "bob"}, true, []string{"/usr/sbin/gpasswd --add bob adm"}},
		{"group.deluser", []any{"adm", "alice"}, true, []string{"/usr/sbin/gpasswd --del alice adm"}},
		{"group.deluser", []any{"adm", "bob"}, true, nil},
		{"group.members", []any{"adm", "bob,carol"}, true, []string{"/usr/sbin/gpasswd --members bob,carol adm"}},
	}
	for _, tt := range tests {
		t.Run(tt.fun, func(t *testing.T) {
			f := &pkgtest.Fake{}
			env := newEnv(&Module{Run: f.Run, Which: sbin, Root: pkgtest.Accounts(t, "", groupFile, "")})
			got, err := env.Run(context.Background(), tt.fun, tt.args, nil)
			if err != nil || got != tt.want {
				t.Errorf("got %v %v, want %v", got, err, tt.want)
			}
			if diff := cmp.Diff(tt.commands, f.Lines()); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGroupInfo(t *testing.T) {
	env := newEnv(&Module{Run: (&pkgtest.Fake{}).Run, Which: sbin, Root: pkgtest.Accounts(t, "", groupFile, "")})
	got, err := env.Run(context.Background(), "group.info", []any{"adm"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if want := `{"name":"adm","passwd":"x","gid":4,"members":["syslog","alice"]}`; string(b) != want {
		t.Errorf("info = %s, want %s", b, want)
	}
	got, _ = env.Run(context.Background(), "group.info", []any{"nosuch"}, nil)
	if got.(*ordered.Map).Len() != 0 {
		t.Errorf("info of a missing group = %v", got)
	}
}

// TestRealGroup adds, changes and removes a real group.
func TestRealGroup(t *testing.T) {
	pkgtest.NeedRoot(t, "groupadd", "groupdel", "gpasswd")
	if !pkgtest.InPrivateAccounts(t) {
		return
	}
	name := pkgtest.UniqueName("brinetest-")
	env := newEnv(&Module{Run: syscmd.Exec, Which: syscmd.Which})
	ctx := context.Background()
	if got, err := env.Run(ctx, "group.add", []any{name}, ordered.FromPairs("gid", 64123)); err != nil || got != true {
		t.Fatalf("add = %v %v", got, err)
	}
	e, ok := Lookup("", name)
	if !ok || e.GID != 64123 {
		t.Fatalf("after add: %+v %v", e, ok)
	}
	if got, err := env.Run(ctx, "group.adduser", []any{name, "root"}, nil); err != nil || got != true {
		t.Fatalf("adduser = %v %v", got, err)
	}
	if e, _ := Lookup("", name); !cmp.Equal(e.Members, []string{"root"}) {
		t.Errorf("members = %v", e.Members)
	}
	if got, err := env.Run(ctx, "group.deluser", []any{name, "root"}, nil); err != nil || got != true {
		t.Fatalf("deluser = %v %v", got, err)
	}
	if got, err := env.Run(ctx, "group.delete", []any{name}, nil); err != nil || got != true {
		t.Fatalf("delete = %v %v", got, err)
	}
	if _, ok := Lookup("", name); ok {
		t.Error("group still present")
	}
}
