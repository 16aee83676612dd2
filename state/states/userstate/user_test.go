package userstate

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/group"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
	"github.com/brinesalt/brine/state/modules/user"
	"github.com/brinesalt/brine/state/states"
	"github.com/brinesalt/brine/state/states/groupstate"
)

func newEnv(run syscmd.Runner, which syscmd.LookPath, root string, test bool) *modules.Env {
	r := modules.NewRegistry()
	user.Register(r, &user.Module{Run: run, Which: which, Root: root})
	group.Register(r, &group.Module{Run: run, Which: which, Root: root})
	return (&modules.Env{Registry: r, Test: test, Context: map[string]any{}}).WithGrains(ordered.FromPairs("kernel", "Linux", "os", "Debian", "os_family", "Debian"))
}

func apply(t *testing.T, e *modules.Env, fun string, kv ...any) *states.Result {
	t.Helper()
	r := states.NewRegistry()
	Register(r)
	groupstate.Register(r)
	f, reason := r.Lookup(e, fun)
	if f == nil {
		t.Fatal(reason)
	}
	low := ordered.FromPairs(kv...)
	args, kwargs, err := f.Bind(low, keyword.Internal)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Run(context.Background(), &states.Call{Env: e, Args: args, Kwargs: kwargs, Low: low})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const (
	passwdFile = "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice:/:/bin/bash\n"
	groupFile  = "root:x:0:\nadm:x:4:alice\nalice:x:1000:\nweb:x:1500:\n"
	shadowFile = "root:*:19000:0:99999:7:::\nalice:!:19000:0:99999:7:::\n"
)

func sbin(n string) string { return "/usr/sbin/" + n }

func TestUserPresentFacts(t *testing.T) {
	tests := []struct {
		name     string
		test     bool
		low      []any
		result   states.Tri
		comment  string
		commands []string
	}{
		{name: "up to date", low: []any{"name", "alice", "shell", "/bin/bash", "groups", []any{"adm"}},
			result: states.True, comment: "User alice is present and up to date"},
		{name: "test mode lists changes", test: true,
			low:    []any{"name", "alice", "shell", "/bin/sh", "groups", []any{"web"}, "password", "$6$x$y", "fullname", "Alice B"},
			result: states.None,
			comment: "The following user attributes are set to be changed:\ngroups: ['web']\nshell: /bin/sh\npasswd: XXX-REDACTED-XXX\n" +
				"fullname: Alice B\n"},
		{name: "uid change refused", low: []any{"name", "alice", "uid", 2000},
			result:  states.False,
			comment: "Encountered error checking for needed changes. Additional info follows:\n\n- Changing uid (1000 -> 2000) not permitted, set allow_uid_change to True to force this change. Note that this will not change file ownership."},
		{name: "missing group", low: []any{"name", "alice", "groups", []any{"nosuch"}},
			result: states.False, comment: "The following group(s) are not present: nosuch"},
		{name: "test mode new user", test: true, low: []any{"name", "bob"}, result: states.None, comment: "User bob set to be added"},
		{name: "apply changes", low: []any{"name", "alice", "shell", "/bin/sh", "groups", []any{"web"}, "password", "$6$x$y"},
			// The fake tools change nothing, as Salt reports; the password
			// is written to the shadow file itself (shadow.set_password).
			result:   states.False,
			comment:  "These values could not be changed: {'groups': ['web'], 'shell': '/bin/sh'}",
			commands: []string{"id alice", "/usr/sbin/usermod -s /bin/sh alice", "/usr/sbin/usermod -G web alice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &pkgtest.Fake{}
			e := newEnv(f.Run, sbin, pkgtest.Accounts(t, passwdFile, groupFile, shadowFile), tt.test)
			got := apply(t, e, "user.present", tt.low...)
			if got.Result != tt.result || got.Comment != tt.comment {
				t.Errorf("got %v %q\nwant %v %q", got.Result, got.Comment, tt.result, tt.comment)
			}
			if diff := cmp.Diff(tt.commands, f.Lines()); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGroupPresentFacts(t *testing.T) {
	f := &pkgtest.Fake{}
	e := newEnv(f.Run, sbin, pkgtest.Accounts(t, passwdFile, groupFile, shadowFile), true)
	got := apply(t, e, "group.present", "name", "adm", "gid", 4, "addusers", []any{"bob"})
	if got.Result != states.None || got.Comment != "Group adm is present and up to dateaddusers: ['bob']\n" {
		t.Errorf("got %v %q", got.Result, got.Comment)
	}
	got = apply(t, e, "group.present", "name", "web", "members", []any{"alice"}, "addusers", []any{"bob"})
	if got.Result != states.None || !strings.HasPrefix(got.Comment, "Error: Conflicting options") {
		t.Errorf("got %v %q", got.Result, got.Comment)
	}
	e.Test = false
	got = apply(t, e, "group.present", "name", "new", "gid", 1500)
	if got.Result != states.False || got.Comment != "Group new is not present but gid 1500 is already taken by group web" {
		t.Errorf("got %v %q", got.Result, got.Comment)
	}
	if f.Lines() != nil {
		t.Errorf("ran %v", f.Lines())
	}
}

// TestRealUserGroupStates creates, changes and removes a real group and
// user through the states.
func TestRealUserGroupStates(t *testing.T) {
	pkgtest.NeedRoot(t, "useradd", "userdel", "usermod", "groupadd", "groupdel", "gpasswd")
	if !pkgtest.InPrivateAccounts(t) {
		return
	}
	grp := pkgtest.UniqueName("brinetest-g")
	usr := pkgtest.UniqueName("brinetest-u")
	home := t.TempDir() + "/home"
	e := newEnv(syscmd.Exec, syscmd.Which, "", false)

	got := apply(t, e, "group.present", "name", grp, "gid", 64124, "system", true)
	if got.Result != states.True || got.Comment != "New group "+grp+" created" ||
		js(got.Changes) != `{"name":"`+grp+`","passwd":"x","gid":64124,"members":[]}` {
		t.Fatalf("group.present: %v %q %s", got.Result, got.Comment, js(got.Changes))
	}
	got = apply(t, e, "user.present", "name", usr, "shell", "/bin/sh", "home", home, "groups", []any{grp},
		"fullname", "Brine Test", "password", "$6$brine$hash")
	if got.Result != states.True || got.Comment != "New user "+usr+" created" || got.Changes.Value("password") != redacted ||
		js(got.Changes.Value("groups")) != `["`+grp+`","`+usr+`"]` {
		t.Fatalf("user.present: %v %q %s", got.Result, got.Comment, js(got.Changes))
	}
	got = apply(t, e, "user.present", "name", usr, "shell", "/bin/sh", "home", home, "groups", []any{grp}, "fullname", "Brine Test")
	if got.Result != states.True || got.Comment != "User "+usr+" is present and up to date" {
		t.Fatalf("user.present again: %v %q", got.Result, got.Comment)
	}
	got = apply(t, e, "user.present", "name", usr, "shell", "/bin/bash", "groups", []any{}, "fullname", "Brine")
	if got.Result != states.True || got.Comment != "Updated user "+usr ||
		js(got.Changes) != `{"groups":["`+usr+`"],"shell":"/bin/bash","fullname":"Brine"}` {
		t.Fatalf("user.present update: %v %q %s", got.Result, got.Comment, js(got.Changes))
	}
	got = apply(t, e, "group.present", "name", grp, "members", []any{usr})
	if got.Result != states.True || js(got.Changes) != `{"Final":"All changes applied successfully"}` {
		t.Fatalf("group.present members: %v %q %s", got.Result, got.Comment, js(got.Changes))
	}
	got = apply(t, e, "user.absent", "name", usr, "purge", true)
	if got.Result != states.True || js(got.Changes) != `{"`+usr+` group":"removed","`+usr+`":"removed"}` {
		t.Fatalf("user.absent: %v %q %s", got.Result, got.Comment, js(got.Changes))
	}
	got = apply(t, e, "group.absent", "name", grp)
	if got.Result != states.True || got.Comment != "Removed group "+grp {
		t.Fatalf("group.absent: %v %q", got.Result, got.Comment)
	}
	if exec.Command("getent", "passwd", usr).Run() == nil || exec.Command("getent", "group", grp).Run() == nil {
		t.Error("test user or group left behind")
	}
}
