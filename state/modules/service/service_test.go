package service

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
	"github.com/brinesalt/brine/state/modules"
)

func newEnv(grains *ordered.Map, m *Module) *modules.Env {
	r := modules.NewRegistry()
	Register(r, m)
	return (&modules.Env{Registry: r, Opts: ordered.New(), Context: map[string]any{}}).WithGrains(grains)
}

func which(tools ...string) func(string) string {
	return func(n string) string {
		for _, t := range tools {
			if t == n {
				return "/usr/bin/" + n
			}
		}
		return ""
	}
}

func systemdGrains() *ordered.Map {
	return ordered.FromPairs("os", "Debian", "os_family", "Debian", "init", "systemd", "systemd", ordered.FromPairs("version", "252"))
}

func TestSystemd(t *testing.T) {
	tests := []struct {
		fun      string
		facts    func(*pkgtest.Fake)
		want     any
		err      string
		commands []string
	}{
		{fun: "service.start", want: true,
			commands: []string{"/usr/bin/systemd-run --scope /usr/bin/systemctl start nginx.service"}},
		{fun: "service.start", facts: func(f *pkgtest.Fake) {
			f.Fail("* start nginx.service", 1, "Running scope as unit: run-r1.scope\nFailed to start nginx.service: Unit nginx.service is masked.")
		}, err: "Failed to start nginx.service: Unit nginx.service is masked.",
			commands: []string{"/usr/bin/systemd-run --scope /usr/bin/systemctl start nginx.service"}},
		{fun: "service.stop", facts: func(f *pkgtest.Fake) { f.Fail("* stop nginx.service", 5, "") }, want: false,
			commands: []string{"/usr/bin/systemd-run --scope /usr/bin/systemctl stop nginx.service"}},
		{fun: "service.reload", want: true, commands: []string{"/usr/bin/systemd-run --scope /usr/bin/systemctl reload nginx.service"}},
		{fun: "service.status", facts: func(f *pkgtest.Fake) { f.On("* is-active nginx.service", 3, "inactive") }, want: false,
			commands: []string{"/usr/bin/systemctl is-active nginx.service"}},
		{fun: "service.enabled", want: true, commands: []string{"/usr/bin/systemctl is-enabled nginx.service"}},
		{fun: "service.disabled", facts: func(f *pkgtest.Fake) { f.On("* is-enabled nginx.service", 1, "disabled") }, want: true,
			commands: []string{"/usr/bin/systemctl is-enabled nginx.service"}},
		{fun: "service.enable", want: true, commands: []string{"/usr/bin/systemd-run --scope /usr/bin/systemctl enable nginx.service"}},
		{fun: "service.available", facts: func(f *pkgtest.Fake) { f.On("* status nginx.service -n 0", 4, "") }, want: false,
			commands: []string{"/usr/bin/systemctl status nginx.service -n 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.fun, func(t *testing.T) {
			f := &pkgtest.Fake{}
			if tt.facts != nil {
				tt.facts(f)
			}
			env := newEnv(systemdGrains(), &Module{Run: f.Run, Which: which("systemctl", "systemd-run"), Root: t.TempDir()})
			got, err := env.Run(context.Background(), tt.fun, []any{"nginx"}, nil)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
			} else if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
			if diff := cmp.Diff(tt.commands, f.Lines()); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSystemdNoScope(t *testing.T) {
	f := &pkgtest.Fake{}
	env := newEnv(systemdGrains(), &Module{Run: f.Run, Which: which("systemctl")})
	env.Opts.Set("systemd.scope", false)
	if _, err := env.Run(context.Background(), "service.restart", []any{"cron.timer"}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/usr/bin/systemctl restart cron.timer"}, f.Lines()); diff != "" {
		t.Error(diff)
	}
}

// sysvRoot lays out /etc/init.d with two scripts, one linked into rc2.d.
func sysvRoot(t *testing.T) string {
	root := t.TempDir()
	for _, d := range []string{"etc/init.d", "etc/rc2.d", "etc/rcS.d"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"ssh", "cron", "README"} {
		if err := os.WriteFile(filepath.Join(root, "etc/init.d", s), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../init.d/ssh", filepath.Join(root, "etc/rc2.d/S01ssh")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestDebianSysV(t *testing.T) {
	grains := ordered.FromPairs("os", "Debian", "os_family", "Debian", "init", "unknown")
	tests := []struct {
		fun      string
		name     string
		facts    func(*pkgtest.Fake)
		want     any
		commands []string
	}{
		{fun: "service.start", name: "cron", want: true, commands: []string{"service cron start"}},
		{fun: "service.status", name: "cron", facts: func(f *pkgtest.Fake) { f.On("service cron status", 3, "") }, want: false,
			commands: []string{"service cron status"}},
		{fun: "service.enabled", name: "ssh", facts: func(f *pkgtest.Fake) { f.On("runlevel", 0, "unknown") }, want: true,
			commands: []string{"runlevel"}},
		{fun: "service.enabled", name: "cron", facts: func(f *pkgtest.Fake) { f.On("runlevel", 0, "N 2") }, want: false,
			commands: []string{"runlevel"}},
		{fun: "service.enable", name: "cron", want: true, commands: []string{"update-rc.d cron defaults", "update-rc.d cron enable"}},
		{fun: "service.disable", name: "ssh", want: true, commands: []string{"update-rc.d ssh disable"}},
		{fun: "service.available", name: "cron", want: true, commands: []string{"runlevel"}},
		{fun: "service.missing", name: "README", want: true, commands: []string{"runlevel"}},
	}
	for _, tt := range tests {
		t.Run(tt.fun+" "+tt.name, func(t *testing.T) {
			f := &pkgtest.Fake{}
			if tt.facts != nil {
				tt.facts(f)
			}
			env := newEnv(grains, &Module{Run: f.Run, Which: which("service", "update-rc.d"), Root: sysvRoot(t)})
			got, err := env.Run(context.Background(), tt.fun, []any{tt.name}, nil)
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
			if diff := cmp.Diff(tt.commands, f.Lines()); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSysVWithInsservAndChkconfig(t *testing.T) {
	f := &pkgtest.Fake{}
	env := newEnv(ordered.FromPairs("os_family", "Debian"), &Module{Run: f.Run, Which: which("service", "update-rc.d", "insserv"), Root: sysvRoot(t)})
	if _, err := env.Run(context.Background(), "service.enable", []any{"cron"}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"insserv cron", "update-rc.d cron enable"}, f.Lines()); diff != "" {
		t.Error(diff)
	}
	f2 := (&pkgtest.Fake{}).On("runlevel", 0, "N 3").On("/sbin/chkconfig --list httpd", 0, "httpd 0:off 1:off 2:on 3:on 4:on 5:on 6:off")
	env = newEnv(ordered.FromPairs("os_family", "RedHat"), &Module{Run: f2.Run, Which: which("service", "chkconfig"), Root: sysvRoot(t)})
	for _, fun := range []string{"service.enabled", "service.enable", "service.start"} {
		if got, err := env.Run(context.Background(), fun, []any{"httpd"}, nil); err != nil || got != true {
			t.Errorf("%s = %v %v", fun, got, err)
		}
	}
	if diff := cmp.Diff([]string{"/sbin/chkconfig httpd on", "/sbin/service httpd start"}, f2.Changing("runlevel", "/sbin/chkconfig --list")); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

func TestPlainRcLinks(t *testing.T) {
	root := sysvRoot(t)
	f := &pkgtest.Fake{}
	env := newEnv(ordered.FromPairs("os_family", "Gentoo"), &Module{Run: f.Run, Which: which(), Root: root})
	ctx := context.Background()
	if got, err := env.Run(ctx, "service.enable", []any{"cron"}, nil); err != nil || got != true {
		t.Fatalf("enable = %v %v", got, err)
	}
	if got, _ := env.Run(ctx, "service.enabled", []any{"cron"}, nil); got != true {
		t.Errorf("enabled after enable = %v", got)
	}
	if got, err := env.Run(ctx, "service.disable", []any{"cron"}, nil); err != nil || got != true {
		t.Fatalf("disable = %v %v", got, err)
	}
	if got, _ := env.Run(ctx, "service.enabled", []any{"cron"}, nil); got != false {
		t.Errorf("enabled after disable = %v", got)
	}
	if _, err := env.Run(ctx, "service.restart", []any{"cron"}, nil); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "etc/init.d/cron") + " restart"
	if lines := f.Lines(); lines[len(lines)-1] != want {
		t.Errorf("restart ran %q, want %q", lines[len(lines)-1], want)
	}
	all, _ := env.Run(ctx, "service.get_all", nil, nil)
	if diff := cmp.Diff([]any{"cron", "ssh"}, all); diff != "" {
		t.Error(diff)
	}
}
