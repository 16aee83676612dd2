package pkg

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
	"github.com/brinesalt/brine/state/modules"
)

func debianGrains() *ordered.Map {
	return ordered.FromPairs("os", "Debian", "os_family", "Debian", "osarch", "amd64", "cpuarch", "x86_64", "init", "unknown")
}

func rockyGrains() *ordered.Map {
	return ordered.FromPairs("os", "Rocky", "os_family", "RedHat", "osarch", "x86_64", "cpuarch", "x86_64", "osmajorrelease", 9,
		"init", "systemd", "systemd", ordered.FromPairs("version", "252"))
}

func alpineGrains() *ordered.Map {
	return ordered.FromPairs("os", "Alpine", "os_family", "Alpine", "osarch", "x86_64", "cpuarch", "x86_64", "init", "openrc")
}

func newEnv(grains *ordered.Map, f *pkgtest.Fake, which ...string) *modules.Env {
	r := modules.NewRegistry()
	Register(r, &Module{Run: f.Run, Which: func(n string) string {
		for _, w := range which {
			if w == n {
				return "/usr/bin/" + n
			}
		}
		return ""
	}})
	return (&modules.Env{Registry: r, Opts: ordered.New(), Context: map[string]any{}}).WithGrains(grains)
}

func call(t *testing.T, env *modules.Env, fun string, args []any, kw ...any) (any, error) {
	t.Helper()
	return env.Run(context.Background(), fun, args, ordered.FromPairs(kw...))
}

const dpkgBefore = "install ok installed bash 5.2.15-2+b2 amd64\n" +
	"deinstall ok config-files oldpkg 1.0-1 amd64\n" +
	"install ok installed libc6 2.36-9 i386\n"

const dpkgAfter = dpkgBefore + "install ok installed nginx 1.22.1-9 amd64\n"

func TestAptListPkgs(t *testing.T) {
	f := (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgBefore)
	env := newEnv(debianGrains(), f)
	got, err := call(t, env, "pkg.list_pkgs", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ordered.FromPairs("bash", "5.2.15-2+b2", "libc6:i386", "2.36-9")
	if diff := cmp.Diff(want.Keys(), got.(*ordered.Map).Keys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	removed, _ := call(t, env, "pkg.list_pkgs", nil, "removed", true)
	if v := removed.(*ordered.Map).Value("oldpkg"); v != "1.0-1" {
		t.Errorf("removed = %v", removed)
	}
	asList, _ := call(t, env, "pkg.list_pkgs", nil, "versions_as_list", true)
	if diff := cmp.Diff([]any{"5.2.15-2+b2"}, asList.(*ordered.Map).Value("bash")); diff != "" {
		t.Error(diff)
	}
	if n := len(f.Lines()); n != 1 {
		t.Errorf("dpkg-query ran %d times, want 1 (cached in __context__)", n)
	}
}

func TestAptInstall(t *testing.T) {
	tests := []struct {
		name     string
		args     []any
		kw       []any
		facts    func(f *pkgtest.Fake)
		commands []string
		changes  *ordered.Map
		err      string
	}{{
		name: "one package with refresh",
		args: []any{"nginx"},
		kw:   []any{"refresh", true},
		facts: func(f *pkgtest.Fake) {
			f.Once("dpkg-query *", 0, dpkgBefore).On("dpkg-query *", 0, dpkgAfter)
		},
		commands: []string{"apt-get -q update",
			"apt-get -q -y -o DPkg::Options::=--force-confold -o DPkg::Options::=--force-confdef install nginx"},
		changes: ordered.FromPairs("nginx", ordered.FromPairs("old", "", "new", "1.22.1-9")),
	}, {
		name: "pinned version via pkgs, downgrade gets --force-yes",
		kw:   []any{"pkgs", []any{ordered.FromPairs("nginx", "1.22.1-9"), ordered.FromPairs("bash", "5.0-1")}},
		facts: func(f *pkgtest.Fake) {
			f.Once("dpkg-query *", 0, dpkgBefore).On("dpkg-query *", 0, dpkgAfter)
		},
		commands: []string{
			"apt-get -q -y -o DPkg::Options::=--force-confold -o DPkg::Options::=--force-confdef install nginx=1.22.1-9",
			"apt-get -q -y -o DPkg::Options::=--force-confold -o DPkg::Options::=--force-confdef --force-yes install bash=5.0-1"},
		changes: ordered.FromPairs("nginx", ordered.FromPairs("old", "", "new", "1.22.1-9")),
	}, {
		name: "apt-get fails",
		args: []any{"nosuch"},
		facts: func(f *pkgtest.Fake) {
			f.On("dpkg-query *", 0, dpkgBefore).Fail("apt-get * install nosuch", 100, "E: Unable to locate package nosuch")
		},
		commands: []string{"apt-get -q -y -o DPkg::Options::=--force-confold -o DPkg::Options::=--force-confdef install nosuch"},
		err:      "Problem encountered installing package(s). Additional info follows:\n\nerrors:\n    - E: Unable to locate package nosuch",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &pkgtest.Fake{}
			tt.facts(f)
			env := newEnv(debianGrains(), f)
			got, err := call(t, env, "pkg.install", tt.args, tt.kw...)
			if diff := cmp.Diff(tt.commands, f.Changing("dpkg-query", "dpkg --get-selections")); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if tt.err != "" {
				ce, ok := AsChanges(err)
				if !ok || ce.WithoutChanges() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(js(tt.changes), js(got)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			for _, c := range f.Calls {
				if c.Args[0] == "apt-get" && c.Args[len(c.Args)-2] == "install" && len(c.Env) != 4 {
					t.Errorf("install ran without DPKG_ENV_VARS: %v", c.Env)
				}
			}
		})
	}
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
