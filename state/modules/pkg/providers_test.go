package pkg

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
)

func TestAptRemovePurge(t *testing.T) {
	after := "install ok installed bash 5.2.15-2+b2 amd64\n"
	f := (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgBefore).On("dpkg-query *", 0, after)
	env := newEnv(debianGrains(), f)
	got, err := call(t, env, "pkg.purge", []any{"oldpkg,libc6:i386,absent"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"removed":{"oldpkg":{"old":"1.0-1","new":""}},"installed":{"libc6:i386":{"old":"2.36-9","new":""}}}`
	if diff := cmp.Diff(want, js(got)); diff != "" {
		t.Errorf("purge (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"apt-get -q -y purge libc6:i386 oldpkg"}, f.Changing("dpkg-query", "dpkg --get-selections")); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	f2 := (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgBefore)
	got, err = call(t, newEnv(debianGrains(), f2), "pkg.remove", nil, "pkgs", []any{"absent"})
	if err != nil || js(got) != "{}" || len(f2.Changing("dpkg-query", "dpkg --get-selections")) != 0 {
		t.Errorf("remove of an absent package = %v %v, ran %v", js(got), err, f2.Lines())
	}
}

func TestAptLatestVersionAndRefresh(t *testing.T) {
	policy := "nginx:\n  Installed: (none)\n  Candidate: 1.22.1-9\n  Version table:\n"
	update := "Hit:1 http://deb.debian.org/debian bookworm InRelease\n" +
		"Get:2 http://deb.debian.org/debian bookworm-updates InRelease [55.4 kB]\n" +
		"Err:3 http://example.invalid/debian x InRelease\n"
	f := (&pkgtest.Fake{}).On("dpkg-query *", 0, dpkgBefore).On("apt-cache -q policy nginx", 0, policy).
		On("apt-cache -q policy bash", 0, "bash:\n  Installed: 5.2.15-2+b2\n  Candidate: 5.2.15-2+b2\n").
		On("apt-get -q update", 0, update)
	env := newEnv(debianGrains(), f)
	got, err := call(t, env, "pkg.latest_version", []any{"nginx", "bash"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"nginx":"1.22.1-9","bash":""}`; js(got) != want {
		t.Errorf("latest_version = %s, want %s", js(got), want)
	}
	got, err = call(t, env, "pkg.refresh_db", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"http://deb.debian.org/debian bookworm InRelease":null,"http://deb.debian.org/debian bookworm-updates InRelease":true,"http://example.invalid/debian x InRelease":false}`
	if js(got) != want {
		t.Errorf("refresh_db = %s", js(got))
	}
	if _, err := call(t, env, "pkg.refresh_db", nil, "failhard", true); err == nil || err.Error() != "Error getting repos: http://example.invalid/debian x InRelease" {
		t.Errorf("failhard err = %v", err)
	}
}

const rpmBefore = "bash_|-(none)_|-5.1.8_|-6.el9_|-x86_64_|-(none)_|-1700000000\n" +
	"glibc_|-(none)_|-2.34_|-60.el9_|-i686_|-(none)_|-1700000000\n" +
	"tzdata_|-(none)_|-2023c_|-1.el9_|-noarch_|-(none)_|-1700000000\n"

func TestDnfInstallRemove(t *testing.T) {
	after := rpmBefore + "nginx_|-1_|-1.20.1_|-14.el9_|-x86_64_|-(none)_|-1700000001\n"
	f := (&pkgtest.Fake{}).Once("rpm -qa *", 0, rpmBefore).On("rpm -qa *", 0, after)
	env := newEnv(rockyGrains(), f, "dnf", "yum")
	got, err := call(t, env, "pkg.install", nil, "pkgs", []any{"nginx"}, "fromrepo", "appstream")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"nginx":{"old":"","new":"1:1.20.1-14.el9"}}`; js(got) != want {
		t.Errorf("install = %s, want %s", js(got), want)
	}
	wantCmds := []string{"systemd-run --scope dnf -y --best --allowerasing --disablerepo=* --enablerepo=appstream install nginx"}
	if diff := cmp.Diff(wantCmds, f.Changing("rpm")); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	lst, _ := call(t, env, "pkg.list_pkgs", nil)
	if keys := lst.(*ordered.Map).StringKeys(); !cmp.Equal(keys, []string{"bash", "glibc.i686", "nginx", "tzdata"}) {
		t.Errorf("list_pkgs keys = %v", keys)
	}

	f2 := (&pkgtest.Fake{}).Once("rpm -qa *", 0, after).On("rpm -qa *", 0, rpmBefore)
	env.Opts.Set("systemd.scope", false)
	env2 := newEnv(rockyGrains(), f2, "dnf")
	env2.Opts.Set("systemd.scope", false)
	got, err = call(t, env2, "pkg.remove", []any{"nginx"})
	if err != nil || js(got) != `{"nginx":{"old":"1:1.20.1-14.el9","new":""}}` {
		t.Errorf("remove = %s %v", js(got), err)
	}
	if diff := cmp.Diff([]string{"dnf -y remove nginx"}, f2.Changing("rpm")); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

func TestDnfRefreshAndCandidates(t *testing.T) {
	f := (&pkgtest.Fake{}).On("rpm -qa *", 0, rpmBefore).
		On("dnf5 --quiet --assumeyes check-update", 100, "").
		On("dnf5 --quiet list available nginx bash", 0, "Available Packages\nnginx.x86_64   1:1.20.1-14.el9   appstream\nnginx.x86_64   1:1.22.0-1.el9   appstream\n")
	env := newEnv(rockyGrains(), f, "dnf5", "dnf")
	env.Grains().Set("init", "unknown")
	got, err := call(t, env, "pkg.latest_version", []any{"nginx", "bash"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"nginx":"1:1.22.0-1.el9","bash":""}`; js(got) != want {
		t.Errorf("latest_version = %s, want %s", js(got), want)
	}
	wantCmds := []string{"rpm -qa --nodigest --nosignature --queryformat " + rpmQueryFormat,
		"dnf5 --quiet --assumeyes clean expire-cache", "dnf5 --quiet --assumeyes check-update",
		"dnf5 --quiet list available nginx bash"}
	if diff := cmp.Diff(wantCmds, f.Lines()); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

func TestApk(t *testing.T) {
	before := "musl-1.2.4-r2\nalpine-baselayout-3.4.3-r1\n"
	after := before + "nginx-1.24.0-r6\n"
	f := (&pkgtest.Fake{}).Once("apk info -v", 0, before).On("apk info -v", 0, after)
	env := newEnv(alpineGrains(), f)
	got, err := call(t, env, "pkg.install", []any{"nginx"}, "refresh", true)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"nginx":{"old":"","new":"1.24.0-r6"}}`; js(got) != want {
		t.Errorf("install = %s", js(got))
	}
	if diff := cmp.Diff([]string{"apk update", "apk add nginx"}, f.Changing("apk info")); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	lst, _ := call(t, env, "pkg.list_pkgs", nil)
	if v := lst.(*ordered.Map).Value("alpine-baselayout"); v != "3.4.3-r1" {
		t.Errorf("alpine-baselayout = %v", v)
	}
}

func TestVirtual(t *testing.T) {
	env := newEnv(ordered.FromPairs("os", "Windows", "os_family", "Windows"), &pkgtest.Fake{})
	_, err := call(t, env, "pkg.list_pkgs", nil)
	if err == nil || err.Error() != `'pkg' __virtual__ returned False: The pkg module cannot be loaded: unsupported OS family "Windows"` {
		t.Errorf("err = %v", err)
	}
}

func TestVersionCompare(t *testing.T) {
	deb := []struct {
		a, b string
		want int
	}{
		{"1.0", "1.0", 0}, {"1.0-1", "1.0-2", -1}, {"1:0.1", "2.0", 1}, {"1.0~rc1", "1.0", -1},
		{"1.0+b1", "1.0", 1}, {"2.36-9", "2.36-10", -1}, {"1.2.10", "1.2.9", 1}, {"1.0a", "1.0", 1},
		{"0:1.0", "1.0", 0}, {"1.0-1~bpo1", "1.0-1", -1},
	}
	for _, tt := range deb {
		if got := DebianCompare(tt.a, tt.b); got != tt.want {
			t.Errorf("DebianCompare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	rpm := []struct {
		a, b string
		want int
	}{
		{"1.0-1", "1.0-1", 0}, {"1.0-1.el9", "1.0-2.el9", -1}, {"1:1.0", "2.0", 1}, {"1.0~rc1", "1.0", -1},
		{"1.10", "1.9", 1}, {"1.0a", "1.0", 1}, {"2.34-60.el9", "2.34-60.el9_2", -1}, {"1.0", "1.0-5", 0},
	}
	for _, tt := range rpm {
		if got := RPMCompare(tt.a, tt.b); got != tt.want {
			t.Errorf("RPMCompare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestAptWaitsForTheLock(t *testing.T) {
	if testing.Short() {
		t.Skip("waits two seconds")
	}
	f := (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgBefore).On("dpkg-query *", 0, dpkgAfter).
		Fail("apt-get -q -y * install nginx", 100, "E: Could not get lock /var/lib/dpkg/lock-frontend").
		On("apt-get -q -y * install nginx", 0, "")
	f.Rules[2].Once = true
	got, err := call(t, newEnv(debianGrains(), f), "pkg.install", []any{"nginx"})
	if err != nil || js(got) != `{"nginx":{"old":"","new":"1.22.1-9"}}` {
		t.Errorf("install = %s %v", js(got), err)
	}
	if n := len(f.Changing("dpkg-query", "dpkg --get-selections")); n != 2 {
		t.Errorf("apt-get ran %d times, want 2", n)
	}
}

func TestAptInfoInstalled(t *testing.T) {
	out := "package:brinetest-nginx\nrevision:\narchitecture:amd64\nmaintainer:Debian Nginx Maintainers\nsummary:\nsource:nginx\n" +
		"version:1.22.1-9\nsection:httpd\ninstalled_size:1234\nsize:\nMD5:\nSHA1:\nSHA256:\norigin:\nhomepage:https://nginx.org\n" +
		"status:ii \ndescription:small, powerful web server\n more text\n\n*/~^\\*\n" +
		"package:gone\nversion:1.0\nstatus:rc \ndescription:x\n\n*/~^\\*\n"
	f := (&pkgtest.Fake{}).On("dpkg-query -W *", 0, out)
	got, err := call(t, newEnv(debianGrains(), f), "pkg.info_installed", []any{"brinetest-nginx", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"brinetest-nginx":{"name":"brinetest-nginx","architecture":"amd64","packager":"Debian Nginx Maintainers","source":"nginx",` +
		`"version":"1.22.1-9","group":"httpd","url":"https://nginx.org","description":"small, powerful web server\n more text\n"}}`
	if js(got) != want {
		t.Errorf("info_installed =\n%s\nwant\n%s", js(got), want)
	}
	if lines := f.Lines(); len(lines) != 1 || !strings.HasSuffix(lines[0], " brinetest-nginx gone") {
		t.Errorf("ran %q", lines)
	}
}

func TestAptHolds(t *testing.T) {
	f := (&pkgtest.Fake{}).Once("dpkg-query *", 0, dpkgBefore).On("dpkg-query *", 0, dpkgAfter).
		On("dpkg --get-selections nginx", 0, "nginx\t\t\t\t\thold\n").
		On("dpkg --get-selections bash", 0, "bash\t\t\t\t\tinstall\n").
		On("dpkg --get-selections *", 0, "bash\t\t\t\t\tinstall\nnginx\t\t\t\t\thold\n")
	env := newEnv(debianGrains(), f)
	if _, err := call(t, env, "pkg.install", []any{"nginx"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"dpkg --set-selections", installCmd("nginx"), "dpkg --set-selections"}
	if diff := cmp.Diff(want, f.Changing("dpkg-query", "dpkg --get-selections")); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	var stdin []string
	for _, c := range f.Calls {
		if c.Stdin != "" {
			stdin = append(stdin, c.Stdin)
		}
	}
	if diff := cmp.Diff([]string{"nginx install", "nginx hold"}, stdin); diff != "" {
		t.Errorf("selections (-want +got):\n%s", diff)
	}
	got, _ := call(t, env, "pkg.hold", []any{"bash"})
	if want := `{"bash":{"name":"bash","changes":{"old":"install","new":"hold"},"result":true,"comment":"Package bash is now being held."}}`; js(got) != want {
		t.Errorf("hold = %s", js(got))
	}
	got, _ = call(t, env, "pkg.unhold", nil, "pkgs", []any{"bash"})
	if want := `{"bash":{"name":"bash","changes":{},"result":true,"comment":"Package bash is already set not to be held."}}`; js(got) != want {
		t.Errorf("unhold = %s", js(got))
	}
	got, _ = call(t, env, "pkg.get_selections", nil, "state", "hold")
	if want := `{"hold":["nginx"]}`; js(got) != want {
		t.Errorf("get_selections = %s", js(got))
	}
}

func installCmd(targets string) string {
	return "apt-get -q -y -o DPkg::Options::=--force-confold -o DPkg::Options::=--force-confdef install " + targets
}

func TestUpgradeCommands(t *testing.T) {
	tests := []struct {
		grains *ordered.Map
		which  []string
		list   string
		kw     []any
		want   []string
	}{
		{debianGrains(), nil, "dpkg-query *", []any{"dist_upgrade", true, "refresh", false},
			[]string{"apt-get -q -y -o DPkg::Options::=--force-confold -o DPkg::Options::=--force-confdef dist-upgrade"}},
		{rockyGrains(), []string{"dnf"}, "rpm -qa *", []any{"refresh", false},
			[]string{"systemd-run --scope dnf --quiet -y upgrade"}},
		{alpineGrains(), nil, "apk info -v", nil, []string{"apk update", "apk upgrade"}},
	}
	for _, tt := range tests {
		f := &pkgtest.Fake{}
		got, err := call(t, newEnv(tt.grains, f, tt.which...), "pkg.upgrade", nil, tt.kw...)
		if err != nil || js(got) != "{}" {
			t.Errorf("upgrade = %s %v", js(got), err)
		}
		if diff := cmp.Diff(tt.want, f.Changing(strings.TrimSuffix(tt.list, " *"))); diff != "" {
			t.Errorf("%s: commands (-want +got):\n%s", tt.grains.Value("os"), diff)
		}
	}
}

func TestListUpgrades(t *testing.T) {
	just := "Inst nginx [1.22.1-9] (1.24.0-1 Debian:12/stable [amd64])\nConf nginx (1.24.0-1 Debian:12/stable [amd64])\n" +
		"Conf libc6 (2.36-9+deb12u4 Debian:12/stable [amd64])\n"
	f := (&pkgtest.Fake{}).On("apt-get --just-print dist-upgrade", 0, just)
	got, err := call(t, newEnv(debianGrains(), f), "pkg.list_upgrades", nil, "refresh", false)
	if err != nil || js(got) != `{"nginx":"1.24.0-1","libc6":"2.36-9+deb12u4"}` {
		t.Errorf("apt list_upgrades = %s %v", js(got), err)
	}
	f = (&pkgtest.Fake{}).On("dnf --quiet list upgrades", 0, "Available Upgrades\nnginx.x86_64  1:1.22.0-1.el9  appstream\n")
	e := newEnv(rockyGrains(), f, "dnf")
	e.Grains().Set("init", "unknown")
	got, err = call(t, e, "pkg.list_upgrades", nil, "refresh", false)
	if err != nil || js(got) != `{"nginx":"1:1.22.0-1.el9"}` {
		t.Errorf("dnf list_upgrades = %s %v", js(got), err)
	}
	f = (&pkgtest.Fake{}).On("apk upgrade -s", 0, "(1/1) Upgrading musl (1.2.4-r1 -> 1.2.4-r2)\nOK: 8 MiB in 15 packages\n")
	got, err = call(t, newEnv(alpineGrains(), f), "pkg.list_upgrades", nil, "refresh", false)
	if err != nil || js(got) != `{"musl":"1.2.4-r2"}` {
		t.Errorf("apk list_upgrades = %s %v", js(got), err)
	}
}
