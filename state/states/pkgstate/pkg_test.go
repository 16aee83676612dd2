package pkgstate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg"
	"github.com/brinesalt/brine/state/states"
)

const (
	dpkgBase   = "install ok installed bash 5.2.15-2+b2 amd64\n"
	dpkgNginx1 = dpkgBase + "install ok installed nginx 1.22.1-9 amd64\n"
	dpkgNginx2 = dpkgBase + "install ok installed nginx 1.24.0-1 amd64\n"
	dpkgRC     = dpkgBase + "deinstall ok config-files nginx 1.22.1-9 amd64\n"
	installCmd = "apt-get -q -y -o DPkg::Options::=--force-confold -o DPkg::Options::=--force-confdef install "
)

func env(f *pkgtest.Fake, test bool) *modules.Env {
	r := modules.NewRegistry()
	pkg.Register(r, &pkg.Module{Run: f.Run, Which: func(string) string { return "" }})
	return (&modules.Env{Registry: r, Test: test, Context: map[string]any{}, Opts: ordered.New()}).WithGrains(ordered.FromPairs("os", "Debian", "os_family", "Debian", "osarch", "amd64", "cpuarch", "x86_64", "init", "unknown"))
}

// apply runs state fun with the low chunk's arguments bound as the
// runner binds them.
func apply(t *testing.T, e *modules.Env, fun string, kv ...any) *states.Result {
	t.Helper()
	r := states.NewRegistry()
	Register(r)
	f, reason := r.Lookup(e, fun)
	if f == nil {
		t.Fatal(reason)
	}
	low := ordered.FromPairs(kv...)
	args, kwargs, err := f.Bind(low, keyword.Internal)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Run(context.Background(), &states.Call{Env: e, Args: args, Kwargs: kwargs, Low: low, Saltenv: "base"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

type expect struct {
	result   states.Tri
	comment  string
	changes  string
	commands []string
}

func check(t *testing.T, f *pkgtest.Fake, got *states.Result, w expect) {
	t.Helper()
	if got.Result != w.result || got.Comment != w.comment {
		t.Errorf("result, comment = %v, %q; want %v, %q", got.Result, got.Comment, w.result, w.comment)
	}
	if w.changes == "" {
		w.changes = "{}"
	}
	if diff := cmp.Diff(w.changes, js(got.Changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(w.commands, f.Changing("dpkg-query", "apt-cache", "dpkg --get-selections")); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

func TestInstalled(t *testing.T) {
	tests := []struct {
		name  string
		test  bool
		facts func(f *pkgtest.Fake)
		low   []any
		want  expect
	}{{
		name:  "already installed",
		facts: func(f *pkgtest.Fake) { f.On("dpkg-query *", 0, dpkgNginx1) },
		low:   []any{"name", "nginx"},
		want:  expect{result: states.True, comment: "All specified packages are already installed"},
	}, {
		name:  "already at the version",
		facts: func(f *pkgtest.Fake) { f.On("dpkg-query *", 0, dpkgNginx1) },
		low:   []any{"name", "nginx", "version", "1.22.1-9"},
		want:  expect{result: states.True, comment: "All specified packages are already installed and are at the desired version"},
	}, {
		name:  "test mode predicts",
		test:  true,
		facts: func(f *pkgtest.Fake) { f.On("dpkg-query *", 0, dpkgBase) },
		low:   []any{"name", "nginx"},
		want: expect{result: states.None, comment: "The following packages would be installed/updated: nginx",
			changes: `{"nginx":{"new":"installed","old":""}}`},
	}, {
		name:  "installs",
		facts: func(f *pkgtest.Fake) { f.Once("dpkg-query *", 0, dpkgBase).On("dpkg-query *", 0, dpkgNginx1) },
		low:   []any{"name", "nginx", "refresh", true},
		want: expect{result: states.True, comment: "The following packages were installed/updated: nginx",
			changes:  `{"nginx":{"old":"","new":"1.22.1-9"}}`,
			commands: []string{"apt-get -q update", installCmd + "nginx"}},
	}, {
		name:  "upgrades to a version",
		facts: func(f *pkgtest.Fake) { f.Once("dpkg-query *", 0, dpkgNginx1).On("dpkg-query *", 0, dpkgNginx2) },
		low:   []any{"name", "nginx", "version", "1.24.0-1"},
		want: expect{result: states.True, comment: "The following packages were installed/updated: nginx=1.24.0-1",
			changes:  `{"nginx":{"old":"1.22.1-9","new":"1.24.0-1"}}`,
			commands: []string{"apt-get -q update", installCmd + "nginx=1.24.0-1"}},
	}, {
		name:  "pkgs with one installed",
		facts: func(f *pkgtest.Fake) { f.Once("dpkg-query *", 0, dpkgBase).On("dpkg-query *", 0, dpkgNginx1) },
		low:   []any{"name", "web", "pkgs", []any{"nginx", "bash"}},
		want: expect{result: states.True, comment: "The following packages were installed/updated: nginx\nThe following packages were already installed: bash",
			changes:  `{"nginx":{"old":"","new":"1.22.1-9"}}`,
			commands: []string{"apt-get -q update", installCmd + "nginx"}},
	}, {
		name: "apt-get fails",
		facts: func(f *pkgtest.Fake) {
			f.On("dpkg-query *", 0, dpkgBase).Fail("apt-get * install nosuch", 100, "E: Unable to locate package nosuch")
		},
		low: []any{"name", "nosuch"},
		want: expect{result: states.False,
			comment:  "Problem encountered installing package(s). Additional info follows:\n\nerrors:\n    - E: Unable to locate package nosuch",
			commands: []string{"apt-get -q update", installCmd + "nosuch"}},
	}, {
		name:  "empty pkgs",
		facts: func(f *pkgtest.Fake) {},
		low:   []any{"name", "x", "pkgs", []any{}},
		want:  expect{result: states.True, comment: "No packages to install provided"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &pkgtest.Fake{}
			tt.facts(f)
			got := apply(t, env(f, tt.test), "pkg.installed", tt.low...)
			check(t, f, got, tt.want)
		})
	}
}

func TestLatest(t *testing.T) {
	policy := "nginx:\n  Installed: 1.22.1-9\n  Candidate: 1.24.0-1\n"
	f := (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgNginx1).On("dpkg-query *", 0, dpkgNginx2).On("apt-cache -q policy nginx", 0, policy)
	got := apply(t, env(f, false), "pkg.latest", "name", "nginx")
	check(t, f, got, expect{result: states.True, comment: "The following packages were successfully installed/upgraded: nginx",
		changes:  `{"nginx":{"old":"1.22.1-9","new":"1.24.0-1"}}`,
		commands: []string{"apt-get -q update", installCmd + "nginx"}})

	f = (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgNginx2).On("apt-cache -q policy nginx", 0, "nginx:\n  Candidate: 1.24.0-1\n")
	got = apply(t, env(f, true), "pkg.latest", "name", "nginx")
	check(t, f, got, expect{result: states.True, comment: "Package nginx is already up-to-date", commands: []string{"apt-get -q update"}})

	// An explicit refresh: False, or a run that already refreshed, does not.
	f = (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgNginx2).On("apt-cache -q policy nginx", 0, "nginx:\n  Candidate: 1.24.0-1\n")
	e := env(f, false)
	e.Context[pkg.RefreshedKey] = true
	got = apply(t, e, "pkg.latest", "name", "nginx")
	check(t, f, got, expect{result: states.True, comment: "Package nginx is already up-to-date"})
}

func TestRemovedPurged(t *testing.T) {
	f := (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgNginx1).On("dpkg-query *", 0, dpkgRC)
	got := apply(t, env(f, false), "pkg.removed", "name", "nginx")
	check(t, f, got, expect{result: states.True, comment: "All targeted packages were removed.",
		changes: `{"nginx":{"old":"1.22.1-9","new":""}}`, commands: []string{"apt-get -q -y remove nginx"}})

	f = (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgRC)
	got = apply(t, env(f, true), "pkg.purged", "name", "nginx")
	check(t, f, got, expect{result: states.None, comment: "The following packages will be purged: nginx.",
		changes: `{"nginx":{"new":"purged","old":""}}`})

	f = (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgRC).On("dpkg-query *", 0, dpkgBase)
	got = apply(t, env(f, false), "pkg.purged", "name", "nginx")
	check(t, f, got, expect{result: states.True, comment: "All targeted packages were purged.",
		changes: `{"removed":{"nginx":{"old":"1.22.1-9","new":""}},"installed":{}}`, commands: []string{"apt-get -q -y purge nginx"}})

	f = (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgBase)
	got = apply(t, env(f, false), "pkg.removed", "name", "nginx")
	check(t, f, got, expect{result: states.True, comment: "All specified packages are already absent"})
}

func TestInstalledSources(t *testing.T) {
	f := (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgBase).On("dpkg-query *", 0, dpkgNginx1)
	got := apply(t, env(f, false), "pkg.installed", "name", "web", "sources", []any{
		ordered.FromPairs("nginx", "/tmp/nginx_1.22.1-9_amd64.deb"), ordered.FromPairs("bash", "/tmp/bash.deb")})
	check(t, f, got, expect{result: states.True,
		comment:  "The following packages were installed/updated: nginx\nThe following packages were already installed: bash",
		changes:  `{"nginx":{"old":"","new":"1.22.1-9"}}`,
		commands: []string{"apt-get -q update", installCmd + "/tmp/nginx_1.22.1-9_amd64.deb"}})

	// A relative source is Salt's SaltInvocationError, which pkg.installed
	// does not catch: the runner reports an exception.
	f = (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgBase)
	r := states.NewRegistry()
	Register(r)
	fn, _ := r.Lookup(env(f, false), "pkg.installed")
	low := ordered.FromPairs("name", "web", "sources", []any{ordered.FromPairs("nginx", "relative.deb")})
	args, kwargs, _ := fn.Bind(low, keyword.Internal)
	_, err := fn.Run(context.Background(), &states.Call{Env: env(f, false), Args: args, Kwargs: kwargs, Low: low})
	if err == nil || err.Error() != "Path relative.deb for package nginx is either not absolute or an invalid protocol" {
		t.Errorf("err = %v", err)
	}
}

func TestLatestPkgsTestMode(t *testing.T) {
	f := (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgNginx1).
		On("apt-cache -q policy nginx", 0, "nginx:\n  Candidate: 1.24.0-1\n").
		On("apt-cache -q policy bash", 0, "bash:\n  Candidate: 5.2.15-2+b2\n")
	e := env(f, true)
	e.Context[pkg.RefreshedKey] = true
	got := apply(t, e, "pkg.latest", "name", "web", "pkgs", []any{"nginx", "bash"})
	check(t, f, got, expect{result: states.None,
		comment: "The following packages would be installed/upgraded: nginx\nThe following packages are already up-to-date: bash (5.2.15-2+b2)"})
}

func TestUptodate(t *testing.T) {
	just := "Conf nginx (1.24.0-1 Debian:12/stable [amd64])\n"
	f := (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgNginx1).On("dpkg-query *", 0, dpkgNginx2).
		On("apt-get --just-print dist-upgrade", 0, just)
	got := apply(t, env(f, true), "pkg.uptodate", "name", "sys")
	check(t, f, got, expect{result: states.None, comment: "System update will be performed",
		changes: `{"nginx":{"new":"1.24.0-1","old":"1.22.1-9"}}`, commands: []string{"apt-get --just-print dist-upgrade"}})

	f = (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgNginx1).On("dpkg-query *", 0, dpkgNginx2).
		On("apt-get --just-print dist-upgrade", 0, just)
	got = apply(t, env(f, false), "pkg.uptodate", "name", "sys", "refresh", true)
	check(t, f, got, expect{result: states.True, comment: "Upgrade ran successfully",
		changes: `{"nginx":{"old":"1.22.1-9","new":"1.24.0-1"}}`,
		commands: []string{"apt-get -q update", "apt-get --just-print dist-upgrade", "apt-get -q update",
			"apt-get -q -y -o DPkg::Options::=--force-confold -o DPkg::Options::=--force-confdef upgrade"}})

	got = apply(t, env(&pkgtest.Fake{}, false), "pkg.uptodate", "name", "sys", "refresh", "yes")
	if got.Comment != "refresh must be either True or False" {
		t.Errorf("comment = %q", got.Comment)
	}
}

func TestInstalledHold(t *testing.T) {
	f := (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgNginx1).On("dpkg --get-selections nginx", 0, "nginx\tinstall\n")
	got := apply(t, env(f, false), "pkg.installed", "name", "nginx", "hold", true)
	check(t, f, got, expect{result: states.True,
		comment:  "All specified packages are already installed.\nPackage nginx is now being held.",
		changes:  `{"nginx":{"old":"install","new":"hold"}}`,
		commands: []string{"dpkg --set-selections"}})

	f = (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgBase).On("dpkg-query *", 0, dpkgNginx1).
		On("dpkg --get-selections nginx", 0, "nginx\tinstall\n")
	e := env(f, false)
	e.Context[pkg.RefreshedKey] = true
	got = apply(t, e, "pkg.installed", "name", "nginx", "hold", true)
	check(t, f, got, expect{result: states.True,
		comment:  "The following packages were installed/updated: nginx\nPackage nginx is now being held.",
		changes:  `{"nginx":{"old":"install","new":"1.22.1-9\nhold"}}`,
		commands: []string{installCmd + "nginx", "dpkg --set-selections"}})
}

func TestInstalledVersionLatest(t *testing.T) {
	f := (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgNginx1).On("dpkg-query *", 0, dpkgNginx2).
		On("apt-cache -q policy nginx", 0, "nginx:\n  Candidate: 1.24.0-1\n")
	e := env(f, false)
	e.Context[pkg.RefreshedKey] = true
	got := apply(t, e, "pkg.installed", "name", "nginx", "version", "latest")
	check(t, f, got, expect{result: states.True, comment: "The following packages were installed/updated: nginx=1.24.0-1",
		changes: `{"nginx":{"old":"1.22.1-9","new":"1.24.0-1"}}`, commands: []string{installCmd + "nginx=1.24.0-1"}})

	f = (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgNginx2).On("apt-cache -q policy nginx", 0, "nginx:\n  Candidate: 1.24.0-1\n")
	e = env(f, false)
	e.Context[pkg.RefreshedKey] = true
	got = apply(t, e, "pkg.installed", "name", "nginx", "version", ">=1.23")
	check(t, f, got, expect{result: states.True, comment: "All specified packages are already installed and are at the desired version"})
}
