package status

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func reg(name, doc string, spec modules.Spec, fn modules.Func) {
	modules.Register(modules.Function{Name: "status." + name, Doc: doc, Spec: spec, Fn: fn})
}

func procFile(parse func(string) *ordered.Map, path string) modules.Func {
	return func(context.Context, *modules.Call) (any, error) { return readProc(parse, path), nil }
}

// readProc parses a /proc file; an unreadable file gives {} as in Salt.
func readProc(parse func(string) *ordered.Map, path string) *ordered.Map {
	b, err := os.ReadFile(path)
	if err != nil {
		return ordered.New()
	}
	return parse(string(b))
}

func init() {
	none := modules.Spec{}
	reg("uptime", "Return the uptime as {seconds, since_iso, since_t, days, time, users}.", none,
		func(ctx context.Context, _ *modules.Call) (any, error) { return uptime(ctx, "/proc/uptime") })
	reg("loadavg", "Return the load averages as {1-min, 5-min, 15-min}.", none,
		func(context.Context, *modules.Call) (any, error) { return loadavg("/proc/loadavg") })
	reg("meminfo", "Return /proc/meminfo as {name: {value, unit}}.", none, procFile(parseMeminfo, "/proc/meminfo"))
	reg("cpuinfo", "Return /proc/cpuinfo as {field: value}, flags as a list (the last CPU's values win).", none,
		procFile(parseCPUInfo, "/proc/cpuinfo"))
	reg("cpustats", "Return /proc/stat: the cpu line's times, intr and softirq counters and the other totals.", none,
		procFile(parseCPUStats, "/proc/stat"))
	reg("diskstats", "Return /proc/diskstats keyed by device.", none, procFile(parseDiskstats, "/proc/diskstats"))
	reg("vmstats", "Return /proc/vmstat as {counter: value}.", none, procFile(parseVMStat, "/proc/vmstat"))
	reg("netdev", "Return the per-interface counters of /proc/net/dev.", none, procFile(parseNetdev, "/proc/net/dev"))
	reg("netstats", "Return /proc/net/netstat as {group: {counter: value}}.", none,
		procFile(parseNetstats, "/proc/net/netstat"))
	reg("diskusage", "Return {mountpoint: {available, total}} in bytes for the given paths and filesystem-type globs, or all mounts.",
		modules.Spec{VarArgs: true}, diskusage)
	reg("nproc", "Return the number of processing units available to this process.", none,
		func(context.Context, *modules.Call) (any, error) { return runtime.NumCPU(), nil })
	reg("version", "Return the kernel version string of /proc/version.", none,
		func(context.Context, *modules.Call) (any, error) {
			b, err := os.ReadFile("/proc/version")
			if err != nil {
				return ordered.New(), nil
			}
			return strings.TrimSpace(string(b)), nil
		})
	reg("procs", "Return the processes as {pid: {user, cmd}} from the ps grain's command.", none, procs)
	reg("pid", "Return the PIDs, one a line, of the processes whose ps line matches the regular expression sig.",
		modules.Spec{Params: []modules.Param{{Name: "sig"}}}, pid)
	reg("w", "Return the logged-in users as a list of {idle, jcpu, login, pcpu, tty, user, what} from w -fh.", none,
		func(ctx context.Context, _ *modules.Call) (any, error) { return w(ctx), nil })
	reg("all_status", "Return cpuinfo, cpustats, diskstats, diskusage, loadavg, meminfo, netdev, netstats, uptime, vmstats and w together.",
		none, allStatus)
}

// number is Salt's status._number.
func number(s string) any {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}

// output runs a command and returns its stdout with trailing newlines
// removed, as cmd.run returns it; a missing command gives "".
func output(ctx context.Context, name string, args ...string) string {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return ""
	}
	return strings.TrimRight(string(out), "\r\n")
}

func psCommand(c *modules.Call) string {
	if ps, _ := c.Env.Grains().Value("ps").(string); ps != "" {
		return ps
	}
	return "ps -efHww"
}

func procs(ctx context.Context, c *modules.Call) (any, error) {
	return parsePs(output(ctx, "/bin/sh", "-c", psCommand(c))), nil
}

func pid(ctx context.Context, c *modules.Call) (any, error) {
	re, err := regexp.Compile(c.Str("sig"))
	if err != nil {
		return nil, modules.Errorf("bad regular expression %q: %w", c.Str("sig"), err)
	}
	return matchPids(output(ctx, "/bin/sh", "-c", psCommand(c)), re, strconv.Itoa(os.Getpid())), nil
}

func w(ctx context.Context) []any {
	return parseW(output(ctx, "w", "-fh"))
}

func allStatus(ctx context.Context, c *modules.Call) (any, error) {
	up, err := uptime(ctx, "/proc/uptime")
	if err != nil {
		return nil, err
	}
	load, err := loadavg("/proc/loadavg")
	if err != nil {
		return nil, err
	}
	du, _ := diskusage(ctx, c)
	return ordered.FromPairs(
		"cpuinfo", readProc(parseCPUInfo, "/proc/cpuinfo"),
		"cpustats", readProc(parseCPUStats, "/proc/stat"),
		"diskstats", readProc(parseDiskstats, "/proc/diskstats"),
		"diskusage", du,
		"loadavg", load,
		"meminfo", readProc(parseMeminfo, "/proc/meminfo"),
		"netdev", readProc(parseNetdev, "/proc/net/dev"),
		"netstats", readProc(parseNetstats, "/proc/net/netstat"),
		"uptime", up,
		"vmstats", readProc(parseVMStat, "/proc/vmstat"),
		"w", w(ctx),
	), nil
}
