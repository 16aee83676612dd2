package config

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFindSaltfilePrecedence(t *testing.T) {
	root := t.TempDir()
	flagFile := filepath.Join(root, "flag", "Saltfile")
	envFile := filepath.Join(root, "env", "Saltfile")
	cwd := filepath.Join(root, "cwd")
	home := filepath.Join(root, "home")
	for _, p := range []string{flagFile, envFile, filepath.Join(cwd, "Saltfile"), filepath.Join(home, ".salt", "Saltfile")} {
		writeFile(t, p, "salt-ssh: {}\n")
	}
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			if len(kv) == 2 && kv[0] == k {
				return kv[1], true
			}
			return "", false
		}
	}
	tests := []struct {
		name, flag string
		env        func(string) (string, bool)
		cwd, home  string
		want       string
		err        error
	}{
		{"flag wins", flagFile, env(SaltfileEnv, envFile), cwd, home, flagFile, nil},
		{"env before cwd", "", env(SaltfileEnv, envFile), cwd, home, envFile, nil},
		{"cwd before home", "", env(), cwd, home, filepath.Join(cwd, "Saltfile"), nil},
		{"home last", "", env(), filepath.Join(root, "nothing"), home, filepath.Join(home, ".salt", "Saltfile"), nil},
		{"none", "", env(), filepath.Join(root, "nothing"), filepath.Join(root, "nothing"), "", nil},
		{"empty env stops the search", "", env(SaltfileEnv, ""), cwd, home, "", nil},
		{"missing flag file", filepath.Join(root, "nope"), env(), cwd, home, "", ErrSaltfileNotFound},
		{"missing env file", "", env(SaltfileEnv, filepath.Join(root, "nope")), cwd, home, "", ErrSaltfileNotFound},
		{"a directory is not a Saltfile", filepath.Join(root, "flag"), env(), cwd, home, "", ErrSaltfileNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindSaltfile(tc.flag, tc.env, tc.cwd, tc.home)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseSaltfile(t *testing.T) {
	src := "salt-ssh:\n  config_dir: etc/salt\n  ssh_max_procs: 30\n  ssh_wipe: True\n  ssh_options:\n    - Port=2222\nsalt-call:\n  local: True\n"
	sf, err := ParseSaltfile([]byte(src), "Saltfile", "salt-ssh")
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"config_dir", "etc/salt", "ssh_max_procs", 30, "ssh_wipe", true, "ssh_options", []any{"Port=2222"}}
	var got []any
	sf.Options.Range(func(k, v any) bool { got = append(got, k, v); return true })
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	for _, src := range []string{"", "salt:\n  x: 1\n", "salt-ssh:\n"} {
		sf, err := ParseSaltfile([]byte(src), "Saltfile", "salt-ssh")
		if err != nil || sf.Options.Len() != 0 {
			t.Errorf("%q: got %v, %v; want no options", src, sf, err)
		}
	}
	for _, src := range []string{"- a\n", "salt-ssh: [a]\n", "salt-ssh: {\n"} {
		if _, err := ParseSaltfile([]byte(src), "Saltfile", "salt-ssh"); err == nil {
			t.Errorf("%q: no error", src)
		}
	}
}
