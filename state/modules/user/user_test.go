package user

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

const (
	passwdFile = "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice A,1,2,3:/home/alice:/bin/bash\n"
	groupFile  = "root:x:0:\nadm:x:4:alice\nalice:x:1000:\nweb:x:1500:\n"
	shadowFile = "root:*:19000:0:99999:7:::\nalice:$6$salt$hash:19000:0:99999:7:::\n"
)

func TestUserInfo(t *testing.T) {
	env := newEnv(&Module{Run: (&pkgtest.Fake{}).Run, Which: sbin, Root: pkgtest.Accounts(t, passwdFile, groupFile, shadowFile)})
	got, err := env.Run(context.Background(), "user.info", []any{"alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"gid":1000,"groups":["adm","alice"],"home":"/home/alice","name":"alice","passwd":"x","shell":"/bin/bash","uid":1000,` +
		`"fullname":"Alice A","roomnumber":"1","workphone":"2","homephone":"3","other":""}`
	if string(b) != want {
		t.Errorf("info =\n%s\nwant\n%s", b, want)
	}
	sh, _ := env.Run(context.Background(), "shadow.info", []any{"alice"}, nil)
	if p := sh.(*ordered.Map).Value("passwd"); p != "$6$salt$hash" {
		t.Errorf("shadow passwd = %v", p)
	}
}

func TestUserCommands(t *testing.T) {
	tests := []struct {
		name     string
		fun      string
		args     []any
		kw       []any
		want     any
		commands []string
	}{
		{name: "add everything", fun: "user.add", args: []any{"bob"},
			kw:   []any{"uid", 2000, "gid", 1500, "shell", "/bin/sh", "home", "/srv/bob", "system", true, "groups", []any{"adm"}, "fullname", "Bob B"},
			want: true,
			commands: []string{"/usr/sbin/useradd -s /bin/sh -u 2000 -g 1500 -m -d /srv/bob -r bob",
				"/usr/sbin/usermod -G adm bob"}},
		{name: "add without home", fun: "user.add", args: []any{"bob"}, kw: []any{"createhome", false}, want: true,
			commands: []string{"/usr/sbin/useradd -M bob"}},
		{name: "delete", fun: "user.delete", args: []any{"alice", true, true}, want: true,
			commands: []string{"/usr/sbin/userdel -r -f alice"}},
		{name: "chshell", fun: "user.chshell", args: []any{"alice", "/bin/zsh"}, want: false,
			commands: []string{"/usr/sbin/usermod -s /bin/zsh alice"}},
		{name: "chshell unchanged", fun: "user.chshell", args: []any{"alice", "/bin/bash"}, want: true},
		{name: "chgroups", fun: "user.chgroups", args: []any{"alice", "adm,web", true}, want: true,
			commands: []string{"/usr/sbin/usermod -a -G adm,web alice"}},
		{name: "chfullname", fun: "user.chfullname", args: []any{"alice", "Alice B"}, want: false,
			commands: []string{"/usr/sbin/usermod -c Alice B,1,2,3 alice"}},
		{name: "set_password with usermod", fun: "shadow.set_password", args: []any{"alice", "$6$x$y", true}, want: false,
			commands: []string{"id alice", "usermod -p $6$x$y alice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &pkgtest.Fake{}
			env := newEnv(&Module{Run: f.Run, Which: sbin, Root: pkgtest.Accounts(t, passwdFile, groupFile, shadowFile)})
			got, err := env.Run(context.Background(), tt.fun, tt.args, ordered.FromPairs(tt.kw...))
			if err != nil || got != tt.want {
				t.Errorf("got %v %v, want %v", got, err, tt.want)
			}
			if diff := cmp.Diff(tt.commands, f.Lines()); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRealUser adds, changes and removes a real user.
func TestRealUser(t *testing.T) {
	pkgtest.NeedRoot(t, "useradd", "userdel", "usermod")
	if !pkgtest.InPrivateAccounts(t) {
		return
	}
	name := pkgtest.UniqueName("brinetest-")
	env := newEnv(&Module{Run: syscmd.Exec, Which: syscmd.Which})
	ctx := context.Background()
	run := func(fun string, args []any, kw ...any) any {
		t.Helper()
		got, err := env.Run(ctx, fun, args, ordered.FromPairs(kw...))
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		return got
	}
	if got := run("user.add", []any{name}, "shell", "/bin/sh", "fullname", "Brine Test", "groups", []any{"adm"}, "createhome", false); got != true {
		t.Fatalf("add = %v", got)
	}
	info := run("user.info", []any{name}).(*ordered.Map)
	if info.Value("shell") != "/bin/sh" || info.Value("fullname") != "Brine Test" {
		t.Errorf("info = %v", info)
	}
	if g := info.Value("groups").([]any); !cmp.Equal(g, []any{"adm", name}) && !cmp.Equal(g, []any{"adm"}) {
		t.Errorf("groups = %v", g)
	}
	if got := run("user.chshell", []any{name, "/bin/bash"}); got != true {
		t.Errorf("chshell = %v", got)
	}
	// The real usermod; the direct write is tested on a temporary root
	// (shadowfile_test.go), not on this machine's /etc/shadow.
	if got := run("shadow.set_password", []any{name, "$6$brine$abc"}, "use_usermod", true); got != true {
		t.Errorf("set_password = %v", got)
	}
	if got := run("user.delete", []any{name}, "remove", true, "force", true); got != true {
		t.Errorf("delete = %v", got)
	}
	if got := run("user.info", []any{name}).(*ordered.Map); got.Len() != 0 {
		t.Errorf("user still present: %v", got)
	}
}
