package roster

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSSHConfigRoster(t *testing.T) {
	home, err := filepath.Abs(filepath.Join("testdata", "sshconfig", "home"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(home, ".ssh", "config")
	extra := filepath.Join(home, ".ssh", "conf.d", "10-extra.conf")
	sc, err := ParseSSHConfig(file, osConfigFS{}, home)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewSSHConfigRoster(sc, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	tgt := func(id, host, user string, port int, priv, file string, line int) Target {
		b := base(id, host, line)
		b.User, b.Port, b.Priv, b.File = user, port, filepath.Join(home, ".ssh", priv), file
		return b
	}
	// host is the alias, as in Salt: the dialer resolves HostName,
	// ProxyJump and the rest from the same file.
	db := tgt("db", "db", "fallback", 2222, "id_10.0.0.7", file, 8) // %h is the HostName
	db.IdentitiesOnly = true
	want := []Target{
		tgt("extra", "extra", "svc user", 22, "id_svc user", extra, 1),
		// %r in IdentityFile is the resolved user.
		tgt("web1", "web1", "deploy", 2022, "id_deploy", extra, 4),
		tgt("web2", "web2", "deploy", 22, "id_deploy", file, 4),
		db,
		tgt("bastion-a", "bastion-a", "fallback", 22, "id_fallback", file, 17),
	}
	tests := []struct {
		tgt, typ string
		want     []Target
	}{
		{"*", "glob", want},
		{"web*", "glob", want[1:3]},
		{"db,extra", "list", []Target{want[0], db}},
		{"skip", "glob", nil},
	}
	for _, tc := range tests {
		got, err := r.Targets(context.Background(), tc.tgt, tc.typ)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, got, cmpTarget); d != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.typ, tc.tgt, d)
		}
	}
}

// mapFS is an in-memory configFS.
type mapFS map[string]string

func (m mapFS) ReadFile(name string) ([]byte, error) {
	s, ok := m[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return []byte(s), nil
}

func (m mapFS) Glob(pattern string) ([]string, error) {
	var out []string
	for k := range m {
		if ok, err := filepath.Match(pattern, k); err != nil {
			return nil, err
		} else if ok {
			out = append(out, k)
		}
	}
	return out, nil
}

func TestSSHConfigLookup(t *testing.T) {
	files := mapFS{
		"/h/.ssh/config": "Host a\n  Include inc\nHost b\n  Port 3\nHost *.x !no.x\n  User star\nMatch exec true\n  User never\nMatch host c,d\n  Port 9\n",
		"/h/.ssh/inc":    "Port 1\nHost a\n  User inner\n",
	}
	sc, err := ParseSSHConfig("/h/.ssh/config", files, "/h")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ alias, key, want string }{
		{"a", "port", "1"},     // included under Host a
		{"b", "port", "3"},     // the included Port is still under Host a
		{"a", "user", "inner"}, // Host a (outer) and Host a (inner)
		{"y.x", "user", "star"},
		{"no.x", "user", ""},
		{"Y.X", "user", "star"}, // case-insensitive
		{"c", "user", ""},       // Match exec is never taken
		{"d", "port", "9"},
	}
	for _, tc := range tests {
		o, ok := sc.Lookup(tc.alias, tc.key)
		got := ""
		if ok {
			got = o.Args[0]
		}
		if got != tc.want {
			t.Errorf("Lookup(%q, %q) = %q, want %q", tc.alias, tc.key, got, tc.want)
		}
	}
	var names []string
	for _, h := range sc.Hosts {
		names = append(names, h.Name)
	}
	if d := cmp.Diff([]string{"a", "b"}, names); d != "" {
		t.Errorf("hosts (-want +got):\n%s", d)
	}
}

func TestSSHConfigErrors(t *testing.T) {
	loop := mapFS{"/h/.ssh/config": "Include config\n"}
	_, err := ParseSSHConfig("/h/.ssh/config", loop, "/h")
	var re *Error
	if !errors.As(err, &re) || !strings.Contains(re.Msg, "nested") {
		t.Errorf("include loop: got %v", err)
	}
	bad := mapFS{"/c": "Host a\n  Port nope\n"}
	sc, err := ParseSSHConfig("/c", bad, "/h")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewSSHConfigRoster(sc, testConfig())
	if !errors.As(err, &re) || re.File != "/c" || re.Line != 2 || re.Target != "a" {
		t.Errorf("bad port: got %v", err)
	}
	if _, err := ParseSSHConfig("/missing", mapFS{}, "/h"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
	if _, err := ParseSSHConfig("/q", mapFS{"/q": "Host 'open\n"}, "/h"); !errors.As(err, &re) || re.Line != 1 {
		t.Errorf("bad quote: got %v", err)
	}
}
