package timezone

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/state/modules"
)

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if link, ok := cutLink(content); ok {
			if err := os.Symlink(link, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func cutLink(s string) (string, bool) {
	if len(s) > 3 && s[:3] == "-> " {
		return s[3:], true
	}
	return "", false
}

func noTimedatectl(context.Context) (string, error) { return "", errors.New("no bus") }

func fixed(out string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return out, nil }
}

const tdctl = `               Local time: Tue 2026-12-01 01:41:00 MST
           Universal time: Tue 2026-12-01 08:41:00 UTC
                Time zone: America/Denver (MST, -0700)
          RTC in local TZ: yes
`

func TestZone(t *testing.T) {
	deb := ordered.FromPairs("os", "Debian", "os_family", "Debian")
	rh := ordered.FromPairs("os", "Fedora", "os_family", "RedHat")
	arch := ordered.FromPairs("os", "Arch", "os_family", "Arch")
	tests := []struct {
		name   string
		files  map[string]string
		tdctl  func(context.Context) (string, error)
		grains *ordered.Map
		want   any
		hw     any
	}{
		{"timedatectl", nil, fixed(tdctl), deb, "America/Denver", "localtime"},
		{"debian files", map[string]string{"etc/timezone": "Europe/Berlin\n", "etc/default/rcS": "# c\nUTC=no\n"}, noTimedatectl, deb, "Europe/Berlin", "localtime"},
		{"debian adjtime", map[string]string{"etc/timezone": "Etc/UTC\n", "etc/adjtime": "0.0 0 0.0\n0\nUTC\n"}, noTimedatectl, deb, "Etc/UTC", "UTC"},
		{"redhat sysconfig", map[string]string{"etc/sysconfig/clock": "# ZONE=x\nZONE=\"Asia/Tokyo\"\n", "etc/adjtime": "0\n0\nLOCAL\n"}, noTimedatectl, rh, "Asia/Tokyo", "LOCAL"},
		{"localtime link", map[string]string{"etc/localtime": "-> /usr/share/zoneinfo/Europe/Paris"}, noTimedatectl, arch, "Europe/Paris", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := host{root: tree(t, tt.files), timedatectl: tt.tdctl}
			got, err := h.zone(context.Background(), tt.grains)
			if err != nil || got != tt.want {
				t.Errorf("zone = %v, %v; want %v", got, err, tt.want)
			}
			hw, err := h.hwclock(context.Background(), tt.grains)
			if err != nil || hw != tt.hw {
				t.Errorf("hwclock = %v, %v; want %v", hw, err, tt.hw)
			}
		})
	}
	h := host{root: tree(t, nil), timedatectl: fixed("garbage\n")}
	if _, err := h.zone(context.Background(), deb); err == nil {
		t.Error("unparsable timedatectl output gave no error")
	}
}

func TestLive(t *testing.T) {
	env := (&modules.Env{Pillar: ordered.New(), Opts: ordered.New(),
		Registry: modules.Default, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}).WithGrains(ordered.FromPairs("os", "Debian", "os_family", "Debian"))
	ctx := context.Background()
	off, err := env.Run(ctx, "timezone.get_offset", nil, nil)
	if s, _ := off.(string); err != nil || len(s) != 5 || (s[0] != '+' && s[0] != '-') {
		t.Errorf("get_offset = %v, %v", off, err)
	}
	if code, _ := env.Run(ctx, "timezone.get_zonecode", nil, nil); code == "" {
		t.Error("empty zonecode")
	}
	if _, err := os.Stat("/etc/timezone"); err != nil {
		testhosts.Skip(t, "no /etc/timezone")
	}
	if z, err := env.Run(ctx, "timezone.get_zone", nil, nil); err != nil || z == "" {
		t.Errorf("get_zone = %v, %v", z, err)
	}
}
