// Command beaconcpu measures what beacons cost an idle minion: a real
// master and three salt-minion processes on loopback, started together
// and left idle, one with no beacons, one with inotify (a watched
// directory) and load, one with inotify, load, memusage, diskusage and
// log; each minion's CPU time (utime + stime from /proc/<pid>/stat)
// over the same window after sign-in, as a median over the repetitions
// and as a ratio to the minion without beacons.
//
// No Salt minion can run here (no Salt, no pyinotify), so there is no
// Salt column.
//
//	go run ./bench/beaconcpu -window 60s -reps 3
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's times.
const clockTick = 100

type column struct {
	name, conf string
}

func columns(dir string) []column {
	watch := filepath.Join(dir, "watched")
	logf := filepath.Join(dir, "app.log")
	os.MkdirAll(watch, 0o755)
	os.WriteFile(logf, []byte("start\n"), 0o644)
	inotify := "  inotify:\n    - files:\n        " + watch + ":\n          mask: [create, modify, delete]\n          recurse: True\n"
	load := "  load:\n    - averages: {1m: [0.0, 1000], 5m: [0.0, 1000], 15m: [0.0, 1000]}\n"
	more := "  memusage:\n    - percent: 100%\n  diskusage:\n    - '/': 100%\n    - interval: 10\n" +
		"  log:\n    - file: " + logf + "\n    - tags: {boom: {regex: '.*ERROR.*'}}\n"
	return []column{
		{"no beacons", ""},
		{"inotify + load", "beacons:\n" + inotify + load},
		{"inotify + load + memusage + diskusage + log", "beacons:\n" + inotify + load + more},
	}
}

// cpuTime is a process's user + system time so far.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces: the fields start after ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * time.Second / clockTick, nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func main() {
	window := flag.Duration("window", time.Minute, "idle window measured")
	reps := flag.Int("reps", 3, "repetitions")
	settle := flag.Duration("settle", 5*time.Second, "wait after sign-in before measuring")
	flag.Parse()
	st := &clustertest.Standalone{Prefix: "beaconcpu"}
	code := 0
	func() {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintln(os.Stderr, "beaconcpu:", p)
				code = 1
			}
		}()
		run(st, *window, *settle, *reps)
	}()
	st.Close()
	os.Exit(code)
}

func run(st *clustertest.Standalone, window, settle time.Duration, reps int) {
	c := clustertest.New(st, "auto_accept: True\n")
	cols := columns(c.Dir)
	var ids []string
	for i, col := range cols {
		id := fmt.Sprintf("b%d", i)
		ids = append(ids, id)
		c.StartMinion(id, c.MinionConf(id, id, col.conf))
	}
	c.PingUntil("*", ids...)
	time.Sleep(settle)
	per := make([][]time.Duration, len(cols))
	for r := 0; r < reps; r++ {
		start := make([]time.Duration, len(cols))
		for i, id := range ids {
			start[i] = must(cpuTime(c.Minions[id].Process.Pid))
		}
		time.Sleep(window)
		for i, id := range ids {
			per[i] = append(per[i], must(cpuTime(c.Minions[id].Process.Pid))-start[i])
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("### Idle minion CPU with beacons (`bench/beaconcpu`, %s window, %d repetitions, %d cores, load %s)\n\n",
		window, reps, nproc(), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Println("| minion | CPU per window (median) | per second | runs | vs no beacons |")
	fmt.Println("|---|---|---|---|---|")
	base := median(per[0])
	for i, col := range cols {
		m := median(per[i])
		ratio := "1.00"
		if i > 0 {
			ratio = "n/a (base 0)"
			if base > 0 {
				ratio = fmt.Sprintf("%.2f", float64(m)/float64(base))
			}
		}
		var runs []string
		for _, d := range per[i] {
			runs = append(runs, d.String())
		}
		fmt.Printf("| %s | %s | %.2f ms/s | %s | %s |\n", col.name, m, float64(m)/float64(time.Millisecond)/window.Seconds(), strings.Join(runs, ", "), ratio)
	}
}

func nproc() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "\nprocessor") + 1
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
