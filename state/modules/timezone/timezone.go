// Package timezone is Salt's timezone execution module
// (salt/modules/timezone.py), the read side: the zone name, its
// abbreviation and offset, and whether the hardware clock keeps UTC.
//
// Like Salt it asks timedatectl first. Unlike Salt, a timedatectl that
// fails (no systemd, as in containers) is not an error: the distribution's
// files are read instead, as Salt does on hosts without timedatectl.
// get_zonecode and get_offset come from the Go runtime's local zone (the
// same /etc/localtime and TZ that date(1) reads) instead of running date.
//
// Not here: set_zone, zone_compare and set_hwclock.
package timezone

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// host is where the functions look: a root directory for the files and
// the timedatectl runner, so tests can feed fixtures.
type host struct {
	root        string
	timedatectl func(ctx context.Context) (string, error)
}

func runTimedatectl(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("timedatectl"); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "timedatectl").Output()
	return string(out), err
}

var live = host{root: "/", timedatectl: runTimedatectl}

func reg(name, doc string, fn modules.Func) {
	modules.Register(modules.Function{Name: "timezone." + name, Doc: doc, Fn: fn})
}

func init() {
	reg("get_zone", "Return the system time zone name, e.g. America/Denver.", func(ctx context.Context, c *modules.Call) (any, error) {
		return live.zone(ctx, c.Env.Grains())
	})
	reg("get_zonecode", "Return the current zone abbreviation, e.g. MST.", func(context.Context, *modules.Call) (any, error) {
		name, _ := time.Now().Zone()
		return name, nil
	})
	reg("get_offset", "Return the current offset from UTC as ±hhmm, e.g. -0700.", func(context.Context, *modules.Call) (any, error) {
		return time.Now().Format("-0700"), nil
	})
	reg("get_hwclock", "Return UTC or localtime: what the hardware clock keeps.", func(ctx context.Context, c *modules.Call) (any, error) {
		return live.hwclock(ctx, c.Env.Grains())
	})
}

func (h host) path(p string) string { return filepath.Join(h.root, p) }

func (h host) read(p string) (string, error) {
	b, err := os.ReadFile(h.path(p))
	return string(b), err
}

var tzLine = regexp.MustCompile(`Time ?zone:\s+(\S+)`)

func (h host) zone(ctx context.Context, g *ordered.Map) (any, error) {
	if out, err := h.timedatectl(ctx); err == nil {
		for _, l := range strings.Split(out, "\n") {
			if m := tzLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil && strings.Index(strings.TrimSpace(l), m[0]) == 0 {
				return m[1], nil
			}
		}
		return nil, modules.Errorf("Failed to parse timedatectl output: %s\nPlease file an issue with SaltStack", out)
	}
	family, _ := g.Value("os_family").(string)
	osName, _ := g.Value("os").(string)
	switch {
	case strings.EqualFold(osName, "centos"):
		return h.etcLocaltime()
	case strings.Contains(family, "RedHat"), strings.Contains(family, "Suse"):
		return h.assignment("/etc/sysconfig/clock", "ZONE")
	case strings.Contains(family, "Debian"), strings.Contains(family, "Gentoo"):
		s, err := h.read("/etc/timezone")
		if err != nil {
			return nil, modules.Errorf("Problem reading timezone file /etc/timezone: %w", err)
		}
		return strings.TrimSpace(s), nil
	case family == "Arch", family == "FreeBSD", family == "Slackware", family == "NILinuxRT":
		return h.etcLocaltime()
	}
	return h.etcLocaltime()
}

// assignment reads NAME="value" from a shell-style file, skipping
// comments, as _get_zone_sysconfig does.
func (h host) assignment(file, name string) (any, error) {
	text, err := h.read(file)
	if err != nil {
		return nil, modules.Errorf("Unable to get timezone from %s", file)
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") || !strings.Contains(l, name) || !strings.Contains(l, "=") {
			continue
		}
		v := l[strings.LastIndex(l, "=")+1:]
		if v = strings.Trim(v, `'"`); v != "" {
			return v, nil
		}
		return "UTC", nil
	}
	return nil, modules.Errorf("Unable to get timezone from %s", file)
}

// etcLocaltime names the zone /etc/localtime links to
// (_get_zone_etc_localtime); a copied file is not matched by hash here.
func (h host) etcLocaltime() (any, error) {
	const tzdir = "/usr/share/zoneinfo/"
	target, err := os.Readlink(h.path("/etc/localtime"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, modules.Errorf("/etc/localtime does not exist")
	}
	if err == nil {
		if !filepath.IsAbs(target) {
			target = filepath.Join("/etc", target)
		}
		target = filepath.Clean(target)
		if rel, ok := strings.CutPrefix(target, filepath.Clean(h.path(tzdir))+"/"); ok {
			return rel, nil
		}
		if rel, ok := strings.CutPrefix(target, tzdir); ok {
			return rel, nil
		}
	}
	return nil, modules.Errorf("Unable to determine timezone")
}

func (h host) hwclock(ctx context.Context, g *ordered.Map) (any, error) {
	if out, err := h.timedatectl(ctx); err == nil {
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimSpace(l)
			if strings.Contains(strings.ToLower(l), "rtc in local tz") {
				if strings.ToLower(strings.TrimSpace(l[strings.LastIndex(l, ":")+1:])) == "yes" {
					return "localtime", nil
				}
				return "UTC", nil
			}
		}
		return nil, modules.Errorf("Failed to parse timedatectl output: %s\nPlease file an issue with SaltStack", out)
	}
	family, _ := g.Value("os_family").(string)
	if strings.Contains(family, "Debian") {
		if text, err := h.read("/etc/default/rcS"); err == nil {
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "#") || !strings.Contains(l, "UTC=") {
					continue
				}
				if strings.ToLower(l[strings.LastIndex(l, "=")+1:]) == "yes" {
					return "UTC", nil
				}
				return "localtime", nil
			}
		}
	}
	return h.adjtime()
}

// adjtime is _get_adjtime_timezone: the last line of /etc/adjtime (UTC
// or LOCAL); None when there is neither adjtime nor an RTC.
func (h host) adjtime() (any, error) {
	text, err := h.read("/etc/adjtime")
	if err == nil {
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		return lines[len(lines)-1], nil
	}
	if _, err := os.Stat(h.path("/dev/rtc")); err == nil {
		return nil, modules.Errorf("Unable to get hwclock timezone from /etc/adjtime")
	}
	return nil, nil
}
