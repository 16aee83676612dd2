package groupstate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/group"
	"github.com/brinesalt/brine/state/states"
)

const groupFile = "root:x:0:\nadm:x:4:alice\nweb:x:1500:alice,bob\n"

func run(t *testing.T, f *pkgtest.Fake, root string, test bool, fun string, kv ...any) *states.Result {
	t.Helper()
	mr := modules.NewRegistry()
	group.Register(mr, &group.Module{Run: f.Run, Which: func(n string) string { return "/usr/sbin/" + n }, Root: root})
	e := (&modules.Env{Registry: mr, Test: test, Context: map[string]any{}}).WithGrains(ordered.FromPairs("kernel", "Linux"))
	r := states.NewRegistry()
	Register(r)
	fn, _ := r.Lookup(e, fun)
	low := ordered.FromPairs(kv...)
	args, kwargs, err := fn.Bind(low, keyword.Internal)
	if err != nil {
		t.Fatal(err)
	}
	res, err := fn.Run(context.Background(), &states.Call{Env: e, Args: args, Kwargs: kwargs, Low: low})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestGroupStates(t *testing.T) {
	tests := []struct {
		name     string
		test     bool
		fun      string
		low      []any
		result   states.Tri
		comment  string
		changes  string
		commands []string
	}{
		{name: "up to date", fun: "group.present", low: []any{"name", "web", "gid", 1500, "members", []any{"bob", "alice"}},
			result: states.True, comment: "Group web is present and up to date", changes: "{}"},
		{name: "members differ (the fake changes nothing)", fun: "group.present", low: []any{"name", "web", "members", []any{"carol"}},
			result: states.False, comment: "Group web is present and up to datemembers: ['carol']\nSome changes could not be applied",
			changes:  `{"Failed":{"members":["carol"]}}`,
			commands: []string{"/usr/sbin/gpasswd --members carol web"}},
		{name: "empty members delete everyone, in test mode", test: true, fun: "group.present", low: []any{"name", "web", "members", []any{}},
			result: states.None, comment: "Group web is present and up to datedelusers: {'alice', 'bob'}\n", changes: "{}"},
		{name: "delusers and gid", fun: "group.present", low: []any{"name", "web", "gid", 1501, "delusers", []any{"bob", "zed"}},
			result: states.False, comment: "Group web is present and up to dategid: 1501\ndelusers: ['bob']\nSome changes could not be applied",
			changes:  `{"Failed":{"gid":1501,"delusers":["bob"]}}`,
			commands: []string{"/usr/sbin/groupmod -g 1501 web", "/usr/sbin/gpasswd --del bob web"}},
		{name: "same user added and deleted", fun: "group.present", low: []any{"name", "web", "addusers", []any{"a"}, "delusers", []any{"a"}},
			result: states.None, comment: "Error. Same user(s) can not be added and deleted simultaneously", changes: "{}"},
		{name: "new group in test mode", test: true, fun: "group.present", low: []any{"name", "db"},
			result: states.None, comment: "Group db set to be added", changes: "{}"},
		{name: "new group that the fake does not create", fun: "group.present", low: []any{"name", "db", "system", true, "addusers", []any{"alice"}},
			result: states.True, comment: "New group db created", changes: "{}",
			commands: []string{"/usr/sbin/groupadd -r db", "/usr/sbin/gpasswd --members alice db"}},
		{name: "absent", fun: "group.absent", low: []any{"name", "adm"},
			result: states.True, comment: "Removed group adm", changes: `{"adm":""}`, commands: []string{"/usr/sbin/groupdel adm"}},
		{name: "absent already", fun: "group.absent", low: []any{"name", "nosuch"},
			result: states.True, comment: "Group not present", changes: "{}"},
		{name: "absent in test mode", test: true, fun: "group.absent", low: []any{"name", "adm"},
			result: states.None, comment: "Group adm is set for removal", changes: "{}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &pkgtest.Fake{}
			got := run(t, f, pkgtest.Accounts(t, "", groupFile, ""), tt.test, tt.fun, tt.low...)
			if got.Result != tt.result || got.Comment != tt.comment || js(got.Changes) != tt.changes {
				t.Errorf("got %v %q %s\nwant %v %q %s", got.Result, got.Comment, js(got.Changes), tt.result, tt.comment, tt.changes)
			}
			if diff := cmp.Diff(tt.commands, f.Lines()); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}
