package coregrains

import (
	"context"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// zfsHost is what salt/grains/zfs.py looks at, so that tests can stand
// in for a host with ZFS.
type zfsHost struct {
	// exists reports whether a file exists (under GatherOptions.Root).
	exists func(path string) bool
	// which is salt.utils.path.which: whether a command is on PATH.
	which func(name string) bool
	// run is cmd.run / cmd.retcode: the output, stderr merged in as
	// cmd.run's redirect_stderr does, and whether it exited 0.
	run func(ctx context.Context, name string, args ...string) (string, bool)
}

// zfsGrains is salt/grains/zfs.py zfs() (v3006):
//   - zfs_support is salt.utils.zfs.is_supported on Linux: the zfs
//     kernel module (/sys/module/zfs) or zfs-fuse, and a zpool command.
//   - zfs_feature_flags is has_feature_flags: whether `man
//     zpool-features` succeeds, whether or not ZFS is supported.
//   - zpool, with support only: each pool's size in bytes from `zpool
//     list -H -o name,size`, as to_size(size, False) converts it.
//
// A line of zpool's output with fewer than two fields makes Salt's
// grain function raise (IndexError), and the loader then drops all three
// grains; so does Brine.
func zfsGrains(ctx context.Context, h zfsHost) map[string]any {
	support := (h.exists("/sys/module/zfs") || h.which("zfs-fuse")) && h.which("zpool")
	g := map[string]any{"zfs_support": support, "zfs_feature_flags": false}
	if h.which("man") {
		// Salt runs `man zpool-features` and keeps the exit status;
		// -w gives the same status without formatting the page.
		_, ok := h.run(ctx, "man", "-w", "zpool-features")
		g["zfs_feature_flags"] = ok
	}
	if !support {
		return g
	}
	out, _ := h.run(ctx, "zpool", "list", "-H", "-o", "name,size")
	pools := map[string]any{}
	for _, line := range pySplitLines(out) {
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil
		}
		pools[f[0]] = zfsToSize(f[1])
	}
	if len(pools) > 0 {
		g["zpool"] = pools
	}
	return g
}

// pySplitLines is Python's str.splitlines: no trailing empty line, and
// \r\n, \r and the other line boundaries Python knows split lines too.
func pySplitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\n\r\v\f\x1c\x1d\x1e\u0085\u2028\u2029")
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		r, size := utf8.DecodeRuneInString(s[i:])
		s = s[i+size:]
		if r == '\r' && strings.HasPrefix(s, "\n") {
			s = s[1:]
		}
	}
	return out
}

// zfsSizeRe is re_zfs_size of salt/utils/zfs.py.
var zfsSizeRe = regexp.MustCompile(`^([0-9]+|[0-9]+\.[0-9]+)([KkMmGgTtPpEe][Bb]?)$`)

// zfsToSize is salt.utils.zfs.to_size(value, False): a size with a unit
// in bytes (from_size), which from_numeric's int() then truncates to an
// integer; "none" stays "none"; anything else goes through to_num: an
// int, else a float, else the string.
func zfsToSize(s string) any {
	if m := zfsSizeRe.FindStringSubmatch(s); m != nil {
		f, _ := strconv.ParseFloat(m[1], 64)
		v := math.Trunc(f * math.Pow(1024, float64(strings.IndexByte("KMGTPE", upper(m[2][0]))+1)))
		if v < math.MaxInt64 {
			return int(v)
		}
		return v // a Python int past int64; kept as a float
	}
	if s == "" || s == "none" {
		return s
	}
	return pyToNum(s)
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

var (
	pyIntRe   = regexp.MustCompile(`^[+-]?[0-9]+(_[0-9]+)*$`)
	pyFloatRe = regexp.MustCompile(`^[+-]?(([0-9]+(_[0-9]+)*)?\.[0-9]+(_[0-9]+)*|[0-9]+(_[0-9]+)*\.?)([eE][+-]?[0-9]+(_[0-9]+)*)?$`)
)

// pyToNum is salt.utils.stringutils.to_num: int(s), else float(s), else
// s. Python's "inf" and "nan" are left as strings.
func pyToNum(s string) any {
	t := strings.TrimSpace(s)
	if pyIntRe.MatchString(t) {
		if n, err := strconv.Atoi(strings.ReplaceAll(t, "_", "")); err == nil {
			return n
		}
	}
	if pyFloatRe.MatchString(t) {
		if f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64); err == nil {
			return f
		}
	}
	return s
}

// zfsGrains gathers the zfs grains on this host.
func (o GatherOptions) zfsGrains(ctx context.Context) map[string]any {
	return zfsGrains(ctx, zfsHost{
		exists: o.exists,
		which:  func(name string) bool { _, err := exec.LookPath(name); return err == nil },
		run:    runMerged,
	})
}

// runMerged runs a command as cmd.run does for grains: stderr merged
// into stdout, the C locale (reset_system_locale), the exit status
// ignored but reported.
func runMerged(ctx context.Context, name string, args ...string) (string, bool) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}
