package pkg

import (
	"context"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// TestRealApt installs, upgrades, removes and purges locally built .deb
// packages with the real apt-get and dpkg, against a private repository
// and apt configuration.
func TestRealApt(t *testing.T) {
	repo := pkgtest.NewAptRepo(t)
	repo.Use()
	name := pkgtest.UniqueName("brinetest-")
	repo.Add(name, "1.0-1")
	r := modules.NewRegistry()
	Register(r, &Module{Run: syscmd.Exec, Which: syscmd.Which})
	env := (&modules.Env{Registry: r, Opts: ordered.New(), Context: map[string]any{}}).WithGrains(ordered.FromPairs("os", "Debian", "os_family", "Debian", "osarch", "amd64", "cpuarch", "x86_64", "init", "unknown"))
	ctx := context.Background()
	run := func(fun string, args []any, kw ...any) any {
		t.Helper()
		env.Context = map[string]any{}
		got, err := env.Run(ctx, fun, args, ordered.FromPairs(kw...))
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		return got
	}
	expect := func(what string, got any, want string) {
		t.Helper()
		if g := js(got); g != want {
			t.Errorf("%s = %s, want %s", what, g, want)
		}
	}

	expect("install", run("pkg.install", []any{name}, "refresh", true), `{"`+name+`":{"old":"","new":"1.0-1"}}`)
	if s := pkgtest.DpkgStatus(name); s != "install ok installed 1.0-1" {
		t.Fatalf("dpkg status after install = %q", s)
	}
	expect("version", run("pkg.version", []any{name}), `"1.0-1"`)
	expect("install again", run("pkg.install", []any{name}), `{}`)
	expect("latest_version, current", run("pkg.latest_version", []any{name}), `""`)

	repo.Add(name, "2.0-1")
	expect("latest_version, newer", run("pkg.latest_version", []any{name}), `"2.0-1"`)
	expect("upgrade", run("pkg.install", nil, "pkgs", []any{ordered.FromPairs(name, "2.0-1")}),
		`{"`+name+`":{"old":"1.0-1","new":"2.0-1"}}`)
	if s := pkgtest.DpkgStatus(name); s != "install ok installed 2.0-1" {
		t.Fatalf("dpkg status after upgrade = %q", s)
	}

	expect("remove", run("pkg.remove", []any{name}), `{"`+name+`":{"old":"2.0-1","new":""}}`)
	if s := pkgtest.DpkgStatus(name); s != "deinstall ok config-files 2.0-1" {
		t.Fatalf("dpkg status after remove = %q", s)
	}
	expect("list_pkgs removed", run("pkg.list_pkgs", nil, "removed", true).(*ordered.Map).Value(name), `"2.0-1"`)
	expect("purge", run("pkg.purge", []any{name}), `{"removed":{"`+name+`":{"old":"2.0-1","new":""}},"installed":{}}`)
	if s := pkgtest.DpkgStatus(name); s != "" && s != "unknown ok not-installed" {
		t.Fatalf("dpkg status after purge = %q", s)
	}

	deb := repo.Add(name+"-src", "0.1-1")
	expect("install from sources", run("pkg.install", nil, "sources", []any{ordered.FromPairs(name+"-src", deb)}),
		`{"`+name+`-src":{"old":"","new":"0.1-1"}}`)
	expect("remove sources package", run("pkg.remove", []any{name + "-src"}), `{"`+name+`-src":{"old":"0.1-1","new":""}}`)
}
