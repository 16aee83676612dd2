package status

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/grains"
)

// uptime builds Salt 3006's dict: seconds since boot, the boot time in
// UTC as Python's isoformat() prints it, days and "H:M" (minutes not
// padded, as Salt formats them), and users when who(1) exists.
func uptime(ctx context.Context, path string) (*ordered.Map, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, modules.Errorf("File %s was not found.", path)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return nil, modules.Errorf("parse %s: empty", path)
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return nil, modules.Errorf("parse %s: %w", path, err)
	}
	ret := uptimeAt(time.Now(), int(up))
	if _, err := exec.LookPath("who"); err == nil {
		ret.Set("users", len(strings.Split(output(ctx, "who", "-s"), "\n")))
	}
	return ret, nil
}

func uptimeAt(now time.Time, seconds int) *ordered.Map {
	boot := now.Add(-time.Duration(seconds) * time.Second).UTC()
	up := now.Sub(boot)
	days := int(up / (24 * time.Hour))
	rest := int((up % (24 * time.Hour)) / time.Second)
	return ordered.FromPairs(
		"seconds", seconds,
		"since_iso", isoformat(boot),
		"since_t", int(float64(now.UnixNano())/1e9-float64(seconds)),
		"days", days,
		"time", fmt.Sprintf("%d:%d", rest/3600, rest%3600/60),
	)
}

// isoformat is Python's datetime.isoformat() for a naive UTC time.
func isoformat(t time.Time) string {
	if us := t.Nanosecond() / 1000; us != 0 {
		return t.Format("2006-01-02T15:04:05") + fmt.Sprintf(".%06d", us)
	}
	return t.Format("2006-01-02T15:04:05")
}

func loadavg(path string) (*ordered.Map, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, modules.Errorf("status.loadavag is not available on your platform")
	}
	return parseLoadavg(string(b))
}

func parseLoadavg(text string) (*ordered.Map, error) {
	f := strings.Fields(text)
	if len(f) < 3 {
		return nil, modules.Errorf("status.loadavag is not available on your platform")
	}
	ret := ordered.New()
	for i, k := range []string{"1-min", "5-min", "15-min"} {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil, modules.Errorf("parse load average %q: %w", f[i], err)
		}
		ret.Set(k, v)
	}
	return ret, nil
}

// diskusage selects absolute paths as given and mountpoints whose
// filesystem type matches any other argument as a glob (all mounts when
// there are no arguments), then reports statvfs figures in bytes.
func diskusage(_ context.Context, c *modules.Call) (any, error) {
	var selected, fstypes []string
	for _, a := range c.VarArgs {
		s := ordered.KeyString(a)
		if strings.HasPrefix(s, "/") {
			selected = append(selected, s)
		} else {
			fstypes = append(fstypes, s)
		}
	}
	if len(c.VarArgs) == 0 {
		fstypes = []string{"*"}
	}
	explicit := len(selected)
	if len(fstypes) > 0 {
		b, err := os.ReadFile("/proc/mounts")
		if err != nil {
			return ordered.New(), nil
		}
		selected = append(selected, selectMounts(string(b), fstypes)...)
	}
	ret := ordered.New()
	for i, p := range selected {
		if ret.Has(p) {
			continue
		}
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil {
			// Salt raises here; a mount found by type that cannot be
			// read (a permission-restricted or stale mount) is skipped
			// instead, so one bad mount does not hide the others.
			if i >= explicit {
				c.Env.Log.Debug("statvfs failed", "path", p, logattr.Err, err.Error())
				continue
			}
			return nil, modules.Errorf("statvfs %s: %w", p, err)
		}
		bs := int(st.Bsize)
		ret.Set(p, ordered.FromPairs("available", int(st.Bavail)*bs, "total", int(st.Blocks)*bs))
	}
	return ret, nil
}

func selectMounts(mounts string, fstypes []string) []string {
	var out []string
	for _, m := range parseMounts(mounts) {
		for _, g := range fstypes {
			if grains.Fnmatch(g, m[1]) {
				out = append(out, m[0])
				break
			}
		}
	}
	return out
}
