// Package disk is Salt's disk execution module (salt/modules/disk.py)
// for Linux: df figures keyed by mountpoint. The values are df's text
// columns, strings as in Salt.
//
// Not here: blkid, tune, wipe, dump, resize2fs, format, fstype, hdparms,
// hpa, smart_attributes and iostat.
package disk

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func reg(name, doc string, fn modules.Func) {
	modules.Register(modules.Function{Name: "disk." + name, Doc: doc,
		Spec: modules.Spec{Params: []modules.Param{{Name: "args", Optional: true}}}, Fn: fn})
}

func init() {
	reg("usage", "Return df -P figures as {mountpoint: {filesystem, 1K-blocks, used, available, capacity}}; args adds df flags (a, B, h, H, i, k, l, P, t, T, x, v).",
		func(ctx context.Context, c *modules.Call) (any, error) {
			flags, err := cleanFlags(c.Arg("args"), "disk.usage")
			if err != nil {
				return nil, err
			}
			if _, err := os.Stat("/etc/mtab"); err != nil {
				c.Env.Log.Error("df cannot run without /etc/mtab")
				return ordered.New(), nil
			}
			return parseUsage(df(ctx, "-P", flags)), nil
		})
	reg("inodeusage", "Return df -iP figures as {mountpoint: {inodes, used, free, use, filesystem}}.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			flags, err := cleanFlags(c.Arg("args"), "disk.inodeusage")
			if err != nil {
				return nil, err
			}
			return parseInodes(df(ctx, "-iP", flags)), nil
		})
	reg("percent", "Return {mountpoint: capacity} from df -P, or the capacity of the mountpoint args.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			ret := parsePercent(df(ctx, "-P", ""))
			arg := c.Arg("args")
			if !modules.Truthy(arg) {
				return ret, nil
			}
			key := c.Str("args")
			if v, ok := ret.Get(key); ok {
				return v, nil
			}
			c.Env.Log.Error("Problem parsing disk usage information: Partition '" + key + "' does not exist!")
			return ordered.New(), nil
		})
}

// cleanFlags is Salt's _clean_flags: args is iterated as Python would,
// so a string contributes each character.
func cleanFlags(args any, caller string) (string, error) {
	var items []string
	switch a := args.(type) {
	case nil:
		return "", nil
	case string:
		for _, r := range a {
			items = append(items, string(r))
		}
	case []any:
		for _, x := range a {
			items = append(items, ordered.KeyString(x))
		}
	default:
		return "", modules.Errorf("Invalid flag passed to %s", caller)
	}
	var b strings.Builder
	for _, f := range items {
		if len(f) != 1 || !strings.Contains("aBhHiklPtTxv", f) {
			return "", modules.Errorf("Invalid flag passed to %s", caller)
		}
		b.WriteString(f)
	}
	return b.String(), nil
}

func df(ctx context.Context, base, flags string) string {
	args := []string{base}
	if flags != "" {
		args = append(args, "-"+flags)
	}
	out, err := exec.CommandContext(ctx, "df", args...).Output()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return ""
	}
	return string(out)
}

// columns joins leading fields until the second one is all digits, so
// that filesystem names with spaces stay whole (Salt's loop).
func columns(line string) []string {
	f := strings.Fields(line)
	for len(f) >= 2 && !isDigits(f[1]) {
		f[0] += " " + f[1]
		f = append(f[:1], f[2:]...)
	}
	return f
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func parseUsage(out string) *ordered.Map {
	ret := ordered.New()
	old := ""
	for _, line := range strings.Split(out, "\n") {
		if line == "" || strings.HasPrefix(line, "Filesystem") {
			continue
		}
		if old != "" {
			line = old + " " + line
		}
		if len(strings.Fields(line)) == 1 {
			old = line
			continue
		}
		old = ""
		f := columns(line)
		if len(f) < 6 {
			continue
		}
		ret.Set(f[5], ordered.FromPairs("filesystem", f[0], "1K-blocks", f[1], "used", f[2],
			"available", f[3], "capacity", f[4]))
	}
	return ret
}

func parseInodes(out string) *ordered.Map {
	ret := ordered.New()
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || strings.HasPrefix(line, "Filesystem") {
			continue
		}
		ret.Set(f[5], ordered.FromPairs("inodes", f[1], "used", f[2], "free", f[3], "use", f[4], "filesystem", f[0]))
	}
	return ret
}

func parsePercent(out string) *ordered.Map {
	ret := ordered.New()
	for _, line := range strings.Split(out, "\n") {
		if line == "" || strings.HasPrefix(line, "Filesystem") {
			continue
		}
		if f := columns(line); len(f) >= 6 {
			ret.Set(f[5], f[4])
		}
	}
	return ret
}
