// Package locale is Salt's locale execution module
// (salt/modules/localemod.py), the read side: the system locale and the
// compiled locales.
//
// On a systemd-booted host the LANG of `localectl status` is the answer,
// as in Salt (which prefers D-Bus when python-dbus is present; Brine has
// no D-Bus client). Elsewhere the distribution's file is read: Debian's
// /etc/default/locale, RedHat's /etc/sysconfig/i18n, SUSE's
// /etc/sysconfig/language (RC_LANG) and Solaris' /etc/default/init.
//
// Not here: set_locale and gen_locale.
package locale

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// host is where the functions look, so tests can feed fixtures.
type host struct {
	root string
	run  func(ctx context.Context, name string, args ...string) (string, error)
}

func run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		err = modules.Errorf("%s: %s", name, strings.TrimSpace(string(exitErr.Stderr)))
	}
	return strings.TrimRight(string(out), "\n"), err
}

var live = host{root: "/", run: run}

func reg(name, doc string, fn modules.Func, p ...modules.Param) {
	modules.Register(modules.Function{Name: "locale." + name, Doc: doc, Spec: modules.Spec{Params: p}, Fn: fn})
}

func init() {
	reg("get_locale", "Return the system locale (LANG), e.g. en_US.UTF-8.", func(ctx context.Context, c *modules.Call) (any, error) {
		return live.getLocale(ctx, c.Env.Grains())
	})
	reg("list_avail", "List the compiled locales (locale -a).", func(ctx context.Context, _ *modules.Call) (any, error) {
		return live.listAvail(ctx)
	})
	reg("avail", "Report whether locale is compiled, comparing normalised names (en_US.UTF-8 matches en_US.utf8).",
		func(ctx context.Context, c *modules.Call) (any, error) {
			list, err := live.listAvail(ctx)
			if err != nil {
				return nil, err
			}
			want := Normalize(c.Str("locale"))
			for _, l := range list {
				if Normalize(strings.TrimSpace(l.(string))) == want {
					return true, nil
				}
			}
			return false, nil
		}, modules.Param{Name: "locale"})
}

func (h host) listAvail(ctx context.Context) ([]any, error) {
	out, err := h.run(ctx, "locale", "-a")
	if err != nil {
		return nil, modules.Errorf("locale -a: %w", err)
	}
	ret := []any{}
	for _, l := range strings.Split(out, "\n") {
		ret = append(ret, l)
	}
	return ret, nil
}

func (h host) booted() bool {
	st, err := os.Stat(filepath.Join(h.root, "run/systemd/system"))
	return err == nil && st.IsDir()
}

func (h host) getLocale(ctx context.Context, g *ordered.Map) (any, error) {
	family, _ := g.Value("os_family").(string)
	if h.booted() && !(family == "Suse" && ordered.KeyString(g.Value("osmajorrelease")) == "12") {
		out, err := h.run(ctx, "localectl", "status")
		if err != nil {
			return nil, modules.Errorf("Command \"localectl\" is in a degraded state.")
		}
		st := ParseLocalectl(out)
		if st.Len() == 0 {
			return nil, modules.Errorf("Unable to parse result of \"localectl\"")
		}
		sys, _ := st.Value("system_locale").(*ordered.Map)
		if v, ok := sys.Get("LANG"); ok {
			return v, nil
		}
		return "", nil
	}
	var file, key string
	switch {
	case strings.Contains(family, "Suse"):
		file, key = "etc/sysconfig/language", "RC_LANG"
	case strings.Contains(family, "RedHat"):
		file, key = "etc/sysconfig/i18n", "LANG="
	case strings.Contains(family, "Debian"):
		file, key = "etc/default/locale", "LANG="
	case strings.Contains(family, "Solaris"):
		file, key = "etc/default/init", "LANG="
	default:
		return nil, modules.Errorf("Error: \"%s\" is unsupported!", ordered.KeyString(g.Value("oscodename")))
	}
	b, err := os.ReadFile(filepath.Join(h.root, file))
	if err != nil {
		return "", nil
	}
	return firstValue(string(b), key), nil
}

// firstValue finds the first line starting with key and returns the
// text between its first and second '=' without double quotes, as
// Salt's split("=")[1] over grep's output does.
func firstValue(text, key string) string {
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, key) {
			continue
		}
		parts := strings.Split(l, "=")
		if len(parts) < 2 {
			return ""
		}
		return strings.ReplaceAll(parts[1], `"`, "")
	}
	return ""
}

// ParseLocalectl reads `localectl status` as _localectl_status:
// {system_locale: {LANG: …}, vc_keymap: {data: …}, …}.
func ParseLocalectl(out string) *ordered.Map {
	ret := ordered.New()
	key := ""
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		data := strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, ": "); ok {
			key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), " ", "_")
			data = v
		}
		if data == "" || key == "" {
			continue
		}
		if strings.Contains(data, "=") {
			parts := strings.Split(data, "=")
			if len(parts) != 2 {
				continue
			}
			m, ok := ret.Value(key).(*ordered.Map)
			if !ok {
				m = ordered.New()
				ret.Set(key, m)
			}
			m.Set(parts[0], parts[1])
			continue
		}
		var v any = data
		if data == "n/a" {
			v = nil
		}
		ret.Set(key, ordered.FromPairs("data", v))
	}
	return ret
}

// Normalize is salt.utils.locales.normalize_locale: territory upper
// case, codeset lower case without dashes, charmap dropped.
func Normalize(loc string) string {
	work, _, _ := strings.Cut(loc, " ")
	work, modifier, _ := strings.Cut(work, "@")
	work, codeset, _ := strings.Cut(work, ".")
	lang, territory, _ := strings.Cut(work, "_")
	out := lang
	if territory != "" {
		out += "_" + strings.ToUpper(territory)
	}
	if codeset = strings.ReplaceAll(strings.ToLower(codeset), "-", ""); codeset != "" {
		out += "." + codeset
	}
	if modifier != "" {
		out += "@" + modifier
	}
	return out
}
