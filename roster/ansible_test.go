package roster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/google/go-cmp/cmp"
)

func omap(kv ...any) *ordered.Map {
	m := ordered.New()
	for i := 0; i+1 < len(kv); i += 2 {
		m.Set(kv[i], kv[i+1])
	}
	return m
}

func ansibleCfg(file string) Config {
	c := testConfig()
	c.File = file
	return c
}

func TestAnsibleINI(t *testing.T) {
	file := filepath.Join("testdata", "ansible", "hosts.ini")
	a, err := LoadAnsible(context.Background(), ansibleCfg(file))
	if err != nil {
		t.Fatal(err)
	}
	tgt := func(id, host string, line, port int, user string) Target {
		b := base(id, host, line)
		b.File, b.Port, b.User = file, port, user
		return b
	}
	salt := tgt("salt.example.com", "127.0.0.1", 5, 22, "gtmanfred")
	salt.Passwd, salt.Sudo, salt.MinionOpts = "password", true, omap("http_port", 80)
	var webs []Target
	for _, n := range []string{"01", "02", "03"} {
		w := tgt("web"+n+".example.com", "web"+n+".example.com", 6, 2200, "deploy")
		w.MinionOpts = omap("http_port", 80)
		webs = append(webs, w)
	}
	home := tgt("home", "12.34.56.78", 9, 23, "gtmanfred")
	home.Passwd, home.MinionOpts = "password", omap("http_port", 80)
	db := tgt("db", "db", 10, 2222, "fromgroup")
	db.Sudo, db.SudoUser, db.Priv, db.MinionOpts = true, "postgres", "/keys/db", omap("http_port", 8080)
	all := append(append([]Target{tgt("ungrouped1", "192.0.2.9", 2, 2200, "root"), salt}, webs...), home, db)

	tests := []struct {
		tgt, typ string
		want     []Target
	}{
		{"*", "glob", all},
		{"all", "nodegroup", all},
		{"computers", "nodegroup", all[1:]},
		{"desktop", "nodegroup", []Target{home, db}},
		{"servers", "nodegroup", all[1:5]},
		{"ungrouped", "nodegroup", all[:1]},
		{"nosuchgroup", "nodegroup", nil},
		{"web0[12]*", "glob", webs[:2]},
		{"home,db", "list", []Target{home, db}},
		{"^web", "pcre", webs},
	}
	for _, tc := range tests {
		t.Run(tc.typ+"/"+tc.tgt, func(t *testing.T) {
			got, err := a.Targets(context.Background(), tc.tgt, tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmpTarget); d != "" {
				t.Errorf("targets (-want +got):\n%s", d)
			}
		})
	}
}

func TestAnsibleYAML(t *testing.T) {
	file := filepath.Join("testdata", "ansible", "hosts.yml")
	a, err := LoadAnsible(context.Background(), ansibleCfg(file))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range a.Entries {
		tg := e.Target
		got[e.ID] = strings.Join([]string{tg.Host, tg.User, tg.Addr(), tg.Passwd.Reveal(), strconv.FormatBool(tg.Sudo)}, " ")
	}
	want := map[string]string{
		"mail.example.com": "mail.example.com admin mail.example.com:22  false",
		"foo.example.com":  "10.0.0.1 admin 10.0.0.1:22  false",
		"bar.example.com":  "bar.example.com admin bar.example.com:2222  false",
		"db-a.example.com": "db-a.example.com admin db-a.example.com:22  true",
		"db-b.example.com": "db-b.example.com admin db-b.example.com:22  true",
		"replica1":         "replica1 repl replica1:22 s3cret false",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("targets (-want +got):\n%s", d)
	}
	groups := map[string][]string{
		"dbservers":  {"db-a.example.com", "db-b.example.com", "replica1"},
		"webservers": {"foo.example.com", "bar.example.com"},
		"ungrouped":  {"mail.example.com"},
	}
	for g, want := range groups {
		ts, err := a.Targets(context.Background(), g, "nodegroup")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tg := range ts {
			ids = append(ids, tg.ID)
		}
		if d := cmp.Diff(want, ids); d != "" {
			t.Errorf("-N %s (-want +got):\n%s", g, d)
		}
	}
}

// TestAnsibleFormatChoice checks that a file without extension is read
// as YAML when it is a mapping of groups, else as INI.
func TestAnsibleFormatChoice(t *testing.T) {
	tests := []struct{ src, want string }{
		{"all:\n  hosts:\n    a:\n", "a"},
		{"a\nb\n", "a b"},
		{"a:2222\n", "a"},
		{"[web]\nw1\n", "w1"},
		{"{\"all\": {\"hosts\": {\"j\": null}}}", "j"},
	}
	for _, tc := range tests {
		inv, err := ParseAnsibleInventory([]byte(tc.src), "inventory")
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if got := strings.Join(inv.Hosts("all"), " "); got != tc.want {
			t.Errorf("%q: hosts %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestAnsibleINIErrors(t *testing.T) {
	tests := []struct {
		src  string
		line int
		msg  string
	}{
		{"[a:children]\nb\n", 2, "includes undefined group: b"},
		{"[a:vars]\nx=1\n", 1, "not valid for undefined group: a"},
		{"[a:weird]\n", 1, "unknown type"},
		{"[a]\nh1 novalue\n", 2, "expected key=value host variable"},
		{"[a]\nh[1:2:0]\n", 2, "not numeric"},
		{"[a]\nh[01:100]\n", 2, "equal-length"},
		{"[a]\nh[0:99999999]\n", 2, "more than"},
		{"[a]\nh 'open\n", 2, "No closing quotation"},
		{"[a:children]\nb\n[b:children]\na\n", 4, "recursive dependency loop"},
		{"[a]\nh:\n", 2, "trailing colon"},
		{"[a]\nh\n[a:vars]\nnovalue\n", 4, "expected key=value"},
	}
	for _, tc := range tests {
		_, err := ParseAnsibleINI([]byte(tc.src), "inv")
		var re *Error
		if !errors.As(err, &re) {
			t.Errorf("%q: got %v, want a *Error", tc.src, err)
			continue
		}
		if re.Line != tc.line || re.File != "inv" || !strings.Contains(re.Msg, tc.msg) {
			t.Errorf("%q: got %v, want line %d and %q", tc.src, err, tc.line, tc.msg)
		}
	}
}

func TestAnsibleBadValue(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "inv")
	if err := os.WriteFile(file, []byte("[a]\nh1\nh2 ansible_port=abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadAnsible(context.Background(), ansibleCfg(file))
	errs := Errors(err)
	if len(errs) != 1 || errs[0].Line != 3 || errs[0].Target != "h2" || errs[0].File != file {
		t.Fatalf("got %v, want one error for h2 at line 3", err)
	}
}

func TestExpandHostRange(t *testing.T) {
	tests := []struct {
		pat  string
		want []string
	}{
		{"web[01:03]", []string{"web01", "web02", "web03"}},
		{"db-[a:c].x", []string{"db-a.x", "db-b.x", "db-c.x"}},
		{"h[0:10:5]", []string{"h0", "h5", "h10"}},
		{"h[:1]", []string{"h0", "h1"}},
		{"r[1:2]c[a:b]", []string{"r1ca", "r1cb", "r2ca", "r2cb"}},
		{"plain", []string{"plain"}},
		{"h[3:1]", nil},
	}
	for _, tc := range tests {
		got, err := expandHostRange(tc.pat, maxInventoryHosts)
		if err != nil {
			t.Fatalf("%s: %v", tc.pat, err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.pat, d)
		}
	}
}

func TestPyLiteral(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"22", 22}, {"-3", -3}, {"0", 0}, {"022", "022"}, {"True", true}, {"true", "true"},
		{"None", nil}, {"'a b'", "a b"}, {`"x"`, "x"}, {"1.5", 1.5}, {"abc", "abc"}, {"_1", "_1"},
		{"inf", "inf"}, {"1_000", 1000},
	}
	for _, tc := range tests {
		if got := pyLiteral(tc.in); !cmp.Equal(got, tc.want) {
			t.Errorf("pyLiteral(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func summary(ts []Target) map[string]string {
	out := map[string]string{}
	for _, tg := range ts {
		out[tg.ID] = fmt.Sprintf("%s@%s sudo=%v opts=%v", tg.User, tg.Addr(), tg.Sudo, toPlain(tg.MinionOpts))
	}
	return out
}

func TestAnsibleVarsDirs(t *testing.T) {
	site := filepath.Join("testdata", "ansible", "site")
	want := map[string]string{
		"web1": "fromall@web1:2201 sudo=false opts=[ntp pool]",
		"web2": "fromall@10.0.0.2:2201 sudo=false opts=[ntp pool]",
		"db1":  "inv@db1:5432 sudo=true opts=[ntp pool]",
	}
	for _, src := range []string{filepath.Join(site, "hosts"), site} {
		a, err := LoadAnsible(context.Background(), ansibleCfg(src))
		if err != nil {
			t.Fatal(err)
		}
		ts, err := a.Targets(context.Background(), "*", "glob")
		if err != nil {
			t.Fatal(err)
		}
		if src == site {
			want["cache1"] = "fromall@cache1:22 sudo=false opts=[ntp pool]"
		}
		if d := cmp.Diff(want, summary(ts)); d != "" {
			t.Errorf("%s (-want +got):\n%s", src, d)
		}
	}
}

func TestAnsibleScript(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "inventory.sh")
	// Salt's documented example of a dynamic inventory (salt/roster/ansible.py).
	body := `#!/bin/sh
[ "$1" = --list ] || exit 1
echo '{
    "servers": ["salt.gtmanfred.com"],
    "desktop": ["home"],
    "computers": {"hosts": [], "children": ["desktop", "servers"], "vars": {"http_port": 80}},
    "_meta": {"hostvars": {
        "salt.gtmanfred.com": {"ansible_ssh_user": "gtmanfred", "ansible_ssh_host": "127.0.0.1",
            "ansible_sudo_pass": "password", "ansible_ssh_pass": "password", "ansible_ssh_port": 22},
        "home": {"ansible_ssh_user": "gtmanfred", "ansible_ssh_host": "12.34.56.78",
            "ansible_sudo_pass": "password", "ansible_ssh_pass": "password", "ansible_ssh_port": 23}
    }}
}'
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAnsible(context.Background(), ansibleCfg(script))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := a.Targets(context.Background(), "computers", "nodegroup")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"salt.gtmanfred.com": "gtmanfred@127.0.0.1:22 sudo=true opts=[http_port 80]",
		"home":               "gtmanfred@12.34.56.78:23 sudo=true opts=[http_port 80]",
	}
	if d := cmp.Diff(want, summary(ts)); d != "" {
		t.Errorf("script inventory (-want +got):\n%s", d)
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho oops >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadAnsible(context.Background(), ansibleCfg(script)); err == nil || !strings.Contains(err.Error(), "oops") {
		t.Errorf("failing script: got %v", err)
	}
}
