package eauth

import (
	"errors"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// yaml parses a YAML value as the master config loader does.
func yaml(t testing.TB, src string) any {
	t.Helper()
	v, err := saltyaml.Load([]byte(src), "test")
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return v
}

func acl(t testing.TB, src string) []any {
	t.Helper()
	l, ok := yaml(t, src).([]any)
	if !ok {
		t.Fatalf("%s: not a list", src)
	}
	return l
}

// fakeTargets expands compound targets from a fixed table, as the
// master's check_minions would over minions web1, web2 and db1.
func fakeTargets(tgt any, tgtType string) []string {
	if tgtType != "compound" {
		return nil
	}
	switch tgt {
	case "web*":
		return []string{"web1", "web2"}
	case "*":
		return []string{"db1", "web1", "web2"}
	case "db1", "G@role:db":
		return []string{"db1"}
	}
	return nil
}

func TestAuthCheck(t *testing.T) {
	kw := func(kv ...any) *ordered.Map { return ordered.FromPairs(append([]any{"__kwarg__", true}, kv...)...) }
	tests := []struct {
		name    string
		acl     string
		fun     string
		args    []any
		minions []string
		want    bool
	}{
		{"glob-like regex", `[test.*]`, "test.ping", nil, []string{"web1"}, true},
		{"other module", `[test.*]`, "cmd.run", nil, []string{"web1"}, false},
		// re.match anchors only at the start: "test" allows "testing.x"
		// and "test.ping" allows "test.pingx" (salt/utils/minions.py).
		{"prefix match", `[test]`, "testing.x", nil, nil, true},
		{"prefix match of a full name", `[test.ping]`, "test.pingx", nil, nil, true},
		{"dot is any character", `[test.ping]`, "testxping", nil, nil, true},
		{"everything", `['.*']`, "cmd.run", nil, nil, true},
		{"invalid regex matches nothing", `['[']`, "[", nil, nil, false},
		{"number matches nothing", `[5]`, "5", nil, nil, false},
		{"@runner is not a function", `['@runner']`, "test.ping", nil, nil, false},
		{"whitelisted find_job", `[]`, "saltutil.find_job", nil, []string{"web1"}, true},
		{"empty acl", `[]`, "test.ping", nil, nil, false},
		{"target covers minions", `[{'web*': [test.*]}]`, "test.ping", nil, []string{"web1", "web2"}, true},
		{"target misses a minion", `[{'web*': [test.*]}]`, "test.ping", nil, []string{"web1", "db1"}, false},
		{"target allows other functions only", `[{'web*': [test.*]}]`, "cmd.run", nil, []string{"web1"}, false},
		{"target with no minions passes (validate_tgt)", `[{'web*': [test.*]}]`, "test.ping", nil, nil, true},
		{"function as a string, not a list", `[{'web*': test.ping}]`, "test.ping", nil, []string{"web1"}, true},
		{"two-key dict is malformed", `[{'web*': [test.*], 'db1': [test.*]}]`, "test.ping", nil, []string{"web1"}, false},
		{"second target entry", `[{'db1': [cmd.*]}, {'web*': [test.*]}]`, "test.ping", nil, []string{"web2"}, true},
		{"args match", `[{'*': [{test.echo: {args: ['hello.*']}}]}]`, "test.echo", []any{"hello world"}, []string{"db1"}, true},
		{"args mismatch", `[{'*': [{test.echo: {args: ['hello.*']}}]}]`, "test.echo", []any{"bye"}, []string{"db1"}, false},
		{"args missing", `[{'*': [{test.echo: {args: ['hello.*']}}]}]`, "test.echo", nil, []string{"db1"}, false},
		{"null arg allows any value", `[{'*': [{test.arg: {args: [null, 'b']}}]}]`, "test.arg", []any{"zz", "b"}, []string{"db1"}, true},
		{"null arg must be present", `[{'*': [{test.arg: {args: [null]}}]}]`, "test.arg", nil, []string{"db1"}, false},
		{"arg is str() of a number", `[{'*': [{test.arg: {args: ['4.']}}]}]`, "test.arg", []any{int64(42)}, []string{"db1"}, true},
		{"kwargs match", `[{'*': [{cmd.run: {kwargs: {cwd: /tmp}}}]}]`, "cmd.run", []any{"ls", kw("cwd", "/tmp")}, []string{"db1"}, true},
		{"kwargs missing", `[{'*': [{cmd.run: {kwargs: {cwd: /tmp}}}]}]`, "cmd.run", []any{"ls"}, []string{"db1"}, false},
		{"kwargs mismatch", `[{'*': [{cmd.run: {kwargs: {cwd: /tmp}}}]}]`, "cmd.run", []any{"ls", kw("cwd", "/etc")}, []string{"db1"}, false},
		{"a dict without __kwarg__ is an argument", `[{'*': [{cmd.run: {kwargs: {cwd: /tmp}}}]}]`, "cmd.run", []any{ordered.FromPairs("cwd", "/tmp")}, []string{"db1"}, false},
		{"one of several conditions", `[{'*': [{test.echo: [{args: [a]}, {args: [b]}]}]}]`, "test.echo", []any{"b"}, []string{"db1"}, true},
		{"conditions but a plain function too", `[{'*': [{test.echo: {args: [a]}}, test.echo]}]`, "test.echo", []any{"z"}, []string{"db1"}, true},
		{"top-level string skips argument checks", `[test.echo, {'*': [{test.echo: {args: [a]}}]}]`, "test.echo", []any{"z"}, []string{"db1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Publish{Funs: []string{tc.fun}, Args: [][]any{tc.args}, Tgt: "x", TgtType: "glob", Minions: tc.minions}
			if got := AuthCheck(acl(t, tc.acl), p, []string{"saltutil.find_job"}, fakeTargets); got != tc.want {
				t.Errorf("AuthCheck(%s, %s %v on %v) = %v, want %v", tc.acl, tc.fun, tc.args, tc.minions, got, tc.want)
			}
		})
	}
}

func TestSpecCheck(t *testing.T) {
	low := func(kv ...any) *ordered.Map {
		return ordered.FromPairs("arg", []any{}, "kwarg", ordered.FromPairs(kv...))
	}
	tests := []struct {
		name, acl, fun, form string
		low                  *ordered.Map
		want                 bool
		err                  error
	}{
		{"@runner", `['@runner']`, "jobs.list_jobs", "runner", nil, true, nil},
		{"@runners", `['@runners']`, "jobs.list_jobs", "runner", nil, true, nil},
		{"@runner is not @wheel", `['@runner']`, "key.list_all", "wheel", nil, false, nil},
		{"@wheel", `['@wheel']`, "key.list_all", "wheel", nil, true, nil},
		{"@module", `['@jobs']`, "jobs.active", "runner", nil, true, nil},
		{"@module other module", `['@jobs']`, "manage.up", "runner", nil, false, nil},
		{"@module in wheel", `['@key']`, "key.accept", "wheel", nil, true, nil},
		{"plain functions do not count", `[jobs.*, '.*']`, "jobs.active", "runner", nil, false, nil},
		{"form list of full names", `[{'@wheel': ['key.list_.*']}]`, "key.list_all", "wheel", nil, true, nil},
		{"form list misses", `[{'@wheel': ['key.list_.*']}]`, "key.accept", "wheel", nil, false, nil},
		{"module list of function names", `[{'@key': [list_all]}]`, "key.list_all", "wheel", nil, true, nil},
		{"module list takes names, not full names", `[{'@key': ['key.list_all']}]`, "key.list_all", "wheel", nil, false, nil},
		{"kwargs condition holds", `[{'@runner': [{jobs.lookup_jid: {kwargs: {jid: '2024.*'}}}]}]`, "jobs.lookup_jid", "runner", low("jid", "20240101"), true, nil},
		{"kwargs condition fails", `[{'@runner': [{jobs.lookup_jid: {kwargs: {jid: '2024.*'}}}]}]`, "jobs.lookup_jid", "runner", low("jid", "20230101"), false, nil},
		{"kwargs condition without kwargs", `[{'@runner': [{jobs.lookup_jid: {kwargs: {jid: '2024.*'}}}]}]`, "jobs.lookup_jid", "runner", nil, false, nil},
		{"no dot", `['@runner']`, "jobs", "runner", nil, false, ErrCheckSyntax},
		{"two dots", `['@runner']`, "a.b.c", "runner", nil, false, ErrCheckSyntax},
		{"empty acl answers before the syntax check", `[]`, "jobs", "runner", nil, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SpecCheck(acl(t, tc.acl), tc.fun, tc.low, tc.form)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("SpecCheck(%s, %s, %s) = %v, %v; want %v, %v", tc.acl, tc.fun, tc.form, got, err, tc.want, tc.err)
			}
		})
	}
}

const sampleAuth = `
pam:
  alice: [a.*]
  'dev.*': [dev.*]
  'web?': [web.*]
  '*': [star.*]
  admins%: [adm.*]
  ops%%: [ops.*]
`

func backend(t *testing.T, src, name string) *BackendConfig {
	t.Helper()
	ea, warns, err := ParseExternalAuth(yaml(t, src))
	if err != nil || len(warns) > 0 {
		t.Fatalf("parse: %v %v", err, warns)
	}
	return ea.Backend(name)
}

func TestFillAuthList(t *testing.T) {
	b := backend(t, sampleAuth, "pam")
	tests := []struct {
		user       string
		groups     []string
		permissive bool
		want       string
	}{
		{"alice", nil, false, "['a.*']"},
		{"carol", nil, false, "['star.*']"},
		{"carol", []string{"admins"}, false, "['adm.*', 'star.*']"},
		{"alice", []string{"admins", "ops"}, false, "['a.*', 'adm.*', 'ops.*']"},
		{"devops", nil, false, "['dev.*']"}, // a full-match regex key
		{"web1", nil, false, "['web.*']"},   // an fnmatch key
		{"web12", nil, false, "['star.*']"},
		{"alice", nil, true, "['a.*', 'star.*']"},
		{"alice", []string{"admins"}, true, "['a.*', 'star.*', 'adm.*']"},
	}
	for _, tc := range tests {
		got := py.Repr(orEmpty(FillAuthList(b, tc.user, tc.groups, tc.permissive)))
		if got != tc.want {
			t.Errorf("FillAuthList(%s, %v, permissive=%v) = %s, want %s", tc.user, tc.groups, tc.permissive, got, tc.want)
		}
	}
}

func TestPerms(t *testing.T) {
	b := backend(t, `
auto:
  alice: [test.*, '@jobs', {'web*': [cmd.run]}, test.*]
  '*': [grains.items, '@jobs']
  admins%: ['@wheel', {'db*': [state.*]}]
`, "auto")
	got := py.Repr(Perms(b, "alice", []string{"admins", "other"}))
	want := "['@jobs', '@wheel', 'grains.items', 'test.*', {'db*': ['state.*']}, {'web*': ['cmd.run']}]"
	if got != want {
		t.Errorf("Perms = %s\nwant   %s", got, want)
	}
	if got := py.Repr(Perms(b, "al.*", nil)); got != "['@jobs', 'grains.items']" {
		t.Errorf("Perms of a user without an entry = %s (sum_permissions matches names exactly)", got)
	}
}

func TestParseExternalAuth(t *testing.T) {
	ea, warns, err := ParseExternalAuth(yaml(t, `
file:
  ^filename: /etc/users
  ^hashtype: sha256
  alice: [test.*]
  bob: test.*
  7: [x]
pam:
auto: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := ea.Names(); py.Repr(strList(got)) != "['file', 'pam', 'auto']" {
		t.Errorf("Names = %v", got)
	}
	f := ea.Backend("file")
	if f.Options["filename"] != "/etc/users" || f.Options["hashtype"] != "sha256" || len(f.Entries) != 1 || f.Entries[0].Match != "alice" {
		t.Errorf("file section = %+v", f)
	}
	if len(warns) != 2 {
		t.Errorf("warnings = %q, want bob's string ACL and the number key", warns)
	}
	for _, bad := range []string{"[a]", "x", "{pam: [a]}", "{pam: x}"} {
		if _, _, err := ParseExternalAuth(yaml(t, bad)); err == nil {
			t.Errorf("ParseExternalAuth(%s): no error", bad)
		}
	}
}
