package roster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/jinja"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/go-multierror"
)

func testConfig() Config {
	return Config{Options: DefaultOptions("/etc/salt/pki/master")}
}

func intp(n int) *int { return &n }

var cmpTarget = cmp.Options{
	cmp.Comparer(func(a, b *ordered.Map) bool {
		return cmp.Equal(toPlain(a), toPlain(b))
	}),
	cmpopts.EquateEmpty(),
}

// toPlain turns ordered maps into key/value lists for comparison.
func toPlain(v any) any {
	switch x := v.(type) {
	case *ordered.Map:
		if x == nil {
			return nil
		}
		var out []any
		x.Range(func(k, v any) bool { out = append(out, k, toPlain(v)); return true })
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toPlain(e)
		}
		return out
	}
	return v
}

func base(id, host string, line int) Target {
	o := DefaultOptions("/etc/salt/pki/master")
	return Target{ID: id, Host: host, Port: 22, User: "root", Priv: o.Priv,
		Timeout: 30 * time.Second, Keepalive: true, KeepaliveInterval: 15,
		KeepaliveCountMax: 3, File: "roster", Line: line}
}

func TestParseFlat(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		defaults *ordered.Map
		want     func() []Target
	}{
		{
			name: "short form",
			src:  "web1: 10.0.0.5\nweb2: web2.example.com\n",
			want: func() []Target {
				return []Target{base("web1", "10.0.0.5", 1), base("web2", "web2.example.com", 2)}
			},
		},
		{
			name: "long form every key",
			src: `db1:
  host: 192.168.1.10
  port: 2222
  user: deploy
  passwd: hunter2
  priv: /root/.ssh/id_ed25519
  priv_passwd: 1234
  sudo: yes
  sudo_user: salt
  tty: True
  timeout: 12.5
  thin_dir: /opt/salt-thin
  cmd_umask: 0077
  minion_opts:
    log_level: debug
  grains:
    role: db
  mine_functions:
    network.ip_addrs: [eth0]
  ssh_options:
    - StrictHostKeyChecking=no
  identities_only: on
  remote_port_forwards: 8080:localhost:80
  set_path: $PATH:/usr/local/bin
  ssh_pre_flight: /srv/pre.sh
  ssh_pre_flight_args: "-v 'a b'"
  ssh_pre_hook: /srv/hook
  disable_wipe: true
  keepalive: false
  keepalive_interval: 10
  keepalive_count_max: 5
`,
			want: func() []Target {
				t := base("db1", "192.168.1.10", 1)
				t.Port, t.User, t.Passwd, t.Priv, t.PrivPasswd = 2222, "deploy", "hunter2", "/root/.ssh/id_ed25519", "1234"
				t.Sudo, t.SudoUser, t.TTY, t.Timeout = true, "salt", true, 12500*time.Millisecond
				t.ThinDir, t.CmdUmask = "/opt/salt-thin", intp(0o077)
				t.MinionOpts = ordered.FromPairs("log_level", "debug")
				t.Grains = ordered.FromPairs("role", "db")
				t.MineFunctions = ordered.FromPairs("network.ip_addrs", []any{"eth0"})
				t.SSHOptions = []string{"StrictHostKeyChecking=no"}
				t.IdentitiesOnly, t.RemotePortForwards = true, "8080:localhost:80"
				t.SetPath, t.SSHPreFlight, t.SSHPreFlightArgs = "$PATH:/usr/local/bin", "/srv/pre.sh", []string{"-v", "a b"}
				t.SSHPreHook, t.DisableWipe = "/srv/hook", true
				t.Keepalive, t.KeepaliveInterval, t.KeepaliveCountMax = false, 10, 5
				return []Target{t}
			},
		},
		{
			name: "host defaults to id, unknown keys kept, umask 63",
			src:  "web1:\n  user: admin\n  cmd_umask: 63\n  color: blue\n",
			want: func() []Target {
				t := base("web1", "web1", 1)
				t.User, t.CmdUmask = "admin", intp(0o077)
				t.Extra = ordered.FromPairs("color", "blue")
				return []Target{t}
			},
		},
		{
			name:     "roster_defaults under entries, shallow",
			src:      "a: 10.0.0.1\nb:\n  host: 10.0.0.2\n  user: bob\n  minion_opts: {x: 1}\n",
			defaults: ordered.FromPairs("user", "daniel", "sudo", true, "minion_opts", ordered.FromPairs("y", 2)),
			want: func() []Target {
				a := base("a", "10.0.0.1", 1)
				a.User, a.Sudo, a.MinionOpts = "daniel", true, ordered.FromPairs("y", 2)
				b := base("b", "10.0.0.2", 2)
				b.User, b.Sudo, b.MinionOpts = "bob", true, ordered.FromPairs("x", 1)
				return []Target{a, b}
			},
		},
		{
			// 1 and True would be the same key in Python (a conflicting ID).
			name: "numeric ids are str()'d, null values keep defaults",
			src:  "2: two.example.com\nTrue:\n  host: t\n  port:\n",
			want: func() []Target {
				return []Target{base("2", "two.example.com", 1), base("True", "t", 2)}
			},
		},
		{
			name: "jinja loop",
			src:  "{% for i in range(2) %}\nweb{{ i }}: 10.0.0.{{ i + 1 }}\n{% endfor %}\n",
			want: func() []Target {
				a, b := base("web0", "10.0.0.1", 2), base("web1", "10.0.0.2", 4)
				return []Target{a, b}
			},
		},
		{
			name: "shebang yaml skips jinja",
			src:  "#!yaml\nweb1: '{{ not jinja }}'\n",
			want: func() []Target { return []Target{base("web1", "{{ not jinja }}", 2)} },
		},
		{
			name: "shebang json",
			src:  "#!json\n{\"web1\": {\"host\": \"h\", \"port\": 2022}}\n",
			want: func() []Target {
				t := base("web1", "h", 2)
				t.Port = 2022
				return []Target{t}
			},
		},
		{
			name: "old-style shebang",
			src:  "#!yaml_jinja\n{% set h = 'x' %}web1: {{ h }}\n",
			want: func() []Target { return []Target{base("web1", "x", 2)} },
		},
		{
			name: "empty and shebang yaml",
			src:  "#!yaml\n",
			want: func() []Target { return nil },
		},
		{
			name: "anchors and merge keys",
			src:  "_base: &b {user: ops, port: 2200}\nweb1:\n  <<: *b\n  host: w1\n",
			want: func() []Target {
				x := base("_base", "_base", 1)
				x.User, x.Port = "ops", 2200
				w := base("web1", "w1", 2)
				w.User, w.Port = "ops", 2200
				return []Target{x, w}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.RosterDefaults = tc.defaults
			f, err := ParseFlat(context.Background(), []byte(tc.src), "roster", cfg)
			if err != nil {
				t.Fatalf("ParseFlat: %v", err)
			}
			got, err := f.Targets(context.Background(), "*", "glob")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want(), got, cmpTarget); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlatErrors(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		defaults *ordered.Map
		render   RenderFunc
		want     []string // "line:target:msg substring"
	}{
		{"bad port", "web1:\n  host: h\n  port: abc\n", nil, nil,
			[]string{`3:web1:port: expected a port number, got a string ("abc")`}},
		{"bad bool", "web1:\n  sudo: maybe\n", nil, nil,
			[]string{`2:web1:sudo: expected a boolean (true/false), got a string ("maybe")`}},
		{"list target", "web1:\n  - a\n  - b\nweb2: ok\n", nil, nil,
			[]string{`2:web1:entry must be a host string or a mapping of roster keys, got a list`}},
		{"all errors at once", "a:\n  port: 0\nb:\n  tty: 1\n  timeout: soon\nc: 5\n", nil, nil,
			[]string{`2:a:port: port 0 out of range`, `4:b:tty: expected a boolean`, `5:b:timeout: expected a number of seconds`,
				`6:c:entry must be a host string or a mapping of roster keys, got an integer (5)`}},
		{"yaml syntax", "web1: a\nweb2: d: e\n", nil, nil, []string{`2::yaml: mapping values are not allowed`}},
		{"top level list", "- a\n- b\n", nil, nil, []string{`1::roster must be a mapping`}},
		{"duplicate id", "a: x\nb: y\na: z\n", nil, nil, []string{`3::yaml: while constructing a mapping: found conflicting ID 'a'`}},
		{"bad defaults reported once", "a: x\nb: y\n", ordered.FromPairs("port", "ssh"), nil,
			[]string{`0::port: expected a port number`}},
		{"jinja syntax error", "a: b\n{% if %}\nc: d\n", nil, nil,
			[]string{`2::render jinja: Jinja syntax error`}},
		{"jinja undefined", "a: b\nc: {{ nope.x }}\n", nil, nil,
			[]string{`2::render jinja: Jinja variable`}},
		{"render error line", "a: b\n", nil, func(context.Context, []byte, string) ([]byte, error) {
			return nil, fmt.Errorf("render: %w", &jinja.Error{Line: 7, Msg: "boom"})
		}, []string{`7::render jinja: boom`}},
		{"error after jinja notes rendered lines", "{% for i in range(2) %}\nweb{{i}}:\n  port: x{{i}}\n{% endfor %}\n", nil, nil,
			[]string{`3:web0:port: expected a port number, got a string ("x0") (line of the rendered roster)`,
				`6:web1:port: expected a port number`}},
		{"unsupported renderer", "#!py\ndef run(): return {}\n", nil, nil, []string{`1::renderer "py" is not supported`}},
		{"bad umask", "a:\n  cmd_umask: 0999\n  ssh_options: StrictHostKeyChecking=no\n", nil, nil,
			[]string{`2:a:cmd_umask: expected an octal umask`, `3:a:ssh_options: expected a list`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.RosterDefaults = tc.defaults
			cfg.Render = tc.render
			f, err := ParseFlat(context.Background(), []byte(tc.src), "roster", cfg)
			if err == nil {
				t.Fatalf("ParseFlat = %v, want error", f)
			}
			errs := Errors(err)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors, want %d: %v", len(errs), len(tc.want), err)
			}
			for i, e := range errs {
				got := fmt.Sprintf("%d:%s:%s", e.Line, e.Target, e.Msg)
				if !strings.HasPrefix(got, tc.want[i]) {
					t.Errorf("error %d = %q, want prefix %q", i, got, tc.want[i])
				}
				if tc.defaults == nil && e.File != "roster" {
					t.Errorf("error %d File = %q, want roster", i, e.File)
				}
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	var me *multierror.Error
	me = multierror.Append(me, &Error{File: "/etc/salt/roster", Line: 3, Target: "web1", Msg: "port: bad"})
	var re *Error
	if !errors.As(me, &re) || re.Line != 3 {
		t.Fatalf("errors.As through multierror failed: %v", me)
	}
	if got, want := re.Error(), `roster /etc/salt/roster:3: target "web1": port: bad`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestWarningsAndMissingFile(t *testing.T) {
	var logs strings.Builder
	cfg := testConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	cfg.File = filepath.Join(t.TempDir(), "roster")
	cfg.Reachable = func(context.Context, string) bool { return true }
	r, err := Open(context.Background(), "flat", cfg)
	if err != nil {
		t.Fatalf("missing roster file: %v, want an empty roster", err)
	}
	ts, err := r.Targets(context.Background(), "admin@10.1.2.3", "glob")
	if err != nil || len(ts) != 1 || ts[0].User != "admin" || ts[0].Host != "10.1.2.3" {
		t.Fatalf("ad-hoc target without roster = %v, %v", ts, err)
	}
	if err := os.WriteFile(cfg.File, []byte("web1:\n  host: h\n  colour: blue\n  passwd: sdb://vault/pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	if _, err := LoadFlat(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"unknown roster key ignored", "key=colour", "sdb:// roster values are not resolved", "key=passwd"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log %q lacks %q", logs.String(), want)
		}
	}
	if strings.Contains(logs.String(), "vault/pw") {
		t.Errorf("log leaks the secret reference: %q", logs.String())
	}
}
