// Command sshscale measures salt-ssh at hundreds and thousands of hosts
// (issue 18): `salt-ssh '*' test.ping` and `cmd.run` on warm hosts beside
// the Go floor (bench/gofloor) and an OpenSSH `xargs -P` loop, at each
// host count and parallelism, on the first N hosts of one cluster. For
// each command it records the median wall time, controller CPU
// (user+sys of the process tree), peak RSS and peak open file
// descriptors of the controller, and prints Markdown tables with the
// ratios to the floor and the CPU per host relative to the smallest
// host count.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

func main() {
	sizes := flag.String("hosts", "100,300,1000", "host counts (subsets of one cluster)")
	pars := flag.String("P", "100,500", "parallelism values (--max-procs, -P)")
	bin := flag.String("bin", "bin", "directory with salt-ssh and the thin binaries")
	floorBin := flag.String("floor", "bin/gofloor", "gofloor binary")
	reps := flag.Int("reps", 3, "repetitions of each command")
	clusterDir := flag.String("cluster", "", "use the running cluster recorded here (testhosts up -dir) instead of starting one")
	opensshSizes := flag.String("openssh-hosts", "", "host counts at which the OpenSSH xargs -P loop also runs (default: all; \"none\": never)")
	opensshReps := flag.Int("openssh-reps", 0, "repetitions of the OpenSSH loop (default: -reps)")
	flag.Parse()
	o := peer{reps: *opensshReps}
	if o.reps == 0 {
		o.reps = *reps
	}
	ns, err := ints(*sizes)
	if err != nil {
		fatal(err)
	}
	ps, err := ints(*pars)
	if err != nil {
		fatal(err)
	}
	switch *opensshSizes {
	case "":
		o.sizes = ns
	case "none":
	default:
		if o.sizes, err = ints(*opensshSizes); err != nil {
			fatal(err)
		}
	}
	if err := bench(context.Background(), ns, ps, *bin, *floorBin, *clusterDir, *reps, o); err != nil {
		fatal(err)
	}
}

// peer says where the OpenSSH loop runs: a process per host is slow to
// start on a loaded machine, so a run may keep it to the smaller sizes.
type peer struct {
	sizes []int
	reps  int
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "sshscale:", err)
	os.Exit(1)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

func cluster(ctx context.Context, dir string, n int) (*testhosts.Cluster, func(), error) {
	if dir != "" {
		c, err := testhosts.Load(dir)
		return c, func() {}, err
	}
	begin := time.Now()
	c, err := testhosts.Start(ctx, testhosts.Config{N: n, LogLevel: "ERROR"})
	if err != nil {
		return nil, nil, err
	}
	fmt.Printf("Cluster of %d hosts up in %s.\n", n, time.Since(begin).Round(time.Second))
	return c, func() { _ = c.Close(context.WithoutCancel(ctx)) }, nil
}

func bench(ctx context.Context, ns, ps []int, bin, floorBin, clusterDir string, reps int, openssh peer) error {
	c, closeCluster, err := cluster(ctx, clusterDir, ns[len(ns)-1])
	if err != nil {
		return err
	}
	defer closeCluster()
	if len(c.Hosts()) < ns[len(ns)-1] {
		return fmt.Errorf("cluster has %d hosts, want %d", len(c.Hosts()), ns[len(ns)-1])
	}
	work, err := os.MkdirTemp("", "sshscale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	sets := map[int]inputs{}
	for _, n := range ns {
		if sets[n], err = writeInputs(filepath.Join(work, strconv.Itoa(n)), c, n); err != nil {
			return err
		}
	}
	saltSSH := func(in inputs, p int, args ...string) []string {
		return append([]string{filepath.Join(bin, "salt-ssh"), "-c", in.etc, "--max-procs", strconv.Itoa(p), "--out", "json"}, args...)
	}
	// Every host gets the thin binary (and every size its grains cache)
	// before the warm rows.
	for _, n := range ns {
		argv := saltSSH(sets[n], ps[len(ps)-1], "*", "test.ping")
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("warm-up at %d hosts: %w: %s", n, err, tail(string(out)))
		}
	}
	fmt.Printf("\n# salt-ssh at scale — %s, %d cores, load %s\n", time.Now().UTC().Format("2006-01-02T15:04Z"), runtime.NumCPU(), load())
	for _, p := range ps {
		rows := map[string]map[int]sample{}
		names := []string{"Go floor: connect + `true`", "salt-ssh test.ping (warm)", "salt-ssh cmd.run 'uname -r' (warm)"}
		if len(openssh.sizes) > 0 {
			names = append(names, "OpenSSH: xargs -P ssh host true")
		}
		for _, name := range names {
			rows[name] = map[int]sample{}
		}
		for _, n := range ns {
			in := sets[n]
			cmds := map[string][]string{
				names[0]: {floorBin, "-hosts", in.hosts, "-key", c.KeyPath(), "-user", c.User(), "-P", strconv.Itoa(p)},
				names[1]: saltSSH(in, p, "*", "test.ping"),
				names[2]: saltSSH(in, p, "*", "cmd.run", "uname -r"),
			}
			if slices.Contains(openssh.sizes, n) {
				cmds[names[3]] = []string{"sh", "-c", fmt.Sprintf("xargs -P %d -I{} ssh -q -i %s -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s %s@{} true < %s",
					p, c.KeyPath(), c.KnownHostsPath(), c.User(), in.ips)}
			}
			for _, name := range names {
				if cmds[name] == nil {
					continue
				}
				r := reps
				if name == "OpenSSH: xargs -P ssh host true" {
					r = openssh.reps
				}
				s, err := measure(cmds[name], r)
				if err != nil {
					return fmt.Errorf("%s at %d hosts, P %d: %w", name, n, p, err)
				}
				rows[name][n] = s
				fmt.Fprintf(os.Stderr, "sshscale: P %d, %d hosts, %s: %s\n", p, n, name, s.wall.Round(time.Millisecond))
			}
		}
		printTable(p, ns, names, rows)
	}
	return nil
}

func printTable(p int, ns []int, names []string, rows map[string]map[int]sample) {
	fmt.Printf("\n### --max-procs / -P %d (medians)\n\n", p)
	fmt.Println("| command | hosts | wall | × floor | CPU/host | × floor | CPU/host × its value at " + strconv.Itoa(ns[0]) + " | peak RSS | peak fds |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	floor := rows[names[0]]
	for _, name := range names {
		for _, n := range ns {
			s, ok := rows[name][n]
			if !ok {
				fmt.Printf("| %s | %d | not run | | | | | | |\n", name, n)
				continue
			}
			perHost := s.cpu / time.Duration(n)
			base := rows[name][ns[0]].cpu / time.Duration(ns[0])
			fds := "—"
			if s.fds > 0 {
				fds = strconv.Itoa(s.fds)
			}
			fmt.Printf("| %s | %d | %s | %s | %.2f ms | %s | %s | %.0f MB | %s |\n", name, n, s.wall.Round(10*time.Millisecond),
				ratio(s.wall, floor[n].wall), float64(perHost)/1e6, ratio(s.cpu, floor[n].cpu), ratio(perHost, base),
				float64(s.rssKB)/1024, fds)
		}
	}
}

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

type sample struct {
	wall, cpu time.Duration
	rssKB     int64
	fds       int // peak open descriptors of the controller process (0: not sampled)
}

// measure runs argv reps times and returns the median of each figure.
// The peak of open descriptors is sampled every 10 ms from /proc; the
// OpenSSH loop (a shell and its xargs) is not sampled, as its
// connections live in separate ssh processes.
func measure(argv []string, reps int) (sample, error) {
	var all []sample
	for range reps {
		cmd := exec.Command(argv[0], argv[1:]...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return sample{}, err
		}
		peak := make(chan int, 1)
		stop := make(chan struct{})
		go func() { peak <- sampleFDs(cmd.Process.Pid, argv[0] != "sh", stop) }()
		err := cmd.Wait()
		wall := time.Since(start)
		close(stop)
		fds := <-peak
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			return sample{}, err
		}
		if err != nil {
			return sample{}, fmt.Errorf("%w: %s", err, tail(stderr.String()))
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		all = append(all, sample{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rssKB: ru.Maxrss, fds: fds})
	}
	return median(all), nil
}

func sampleFDs(pid int, on bool, stop <-chan struct{}) int {
	if !on {
		<-stop
		return 0
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	peak := 0
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if ents, err := os.ReadDir(dir); err == nil {
			peak = max(peak, len(ents))
		}
		select {
		case <-stop:
			return peak
		case <-t.C:
		}
	}
}

func median(xs []sample) sample {
	pick := func(get func(sample) int64) int64 {
		v := make([]int64, len(xs))
		for i, x := range xs {
			v[i] = get(x)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return sample{
		wall:  time.Duration(pick(func(s sample) int64 { return int64(s.wall) })),
		cpu:   time.Duration(pick(func(s sample) int64 { return int64(s.cpu) })),
		rssKB: pick(func(s sample) int64 { return s.rssKB }),
		fds:   int(pick(func(s sample) int64 { return int64(s.fds) })),
	}
}

type inputs struct{ etc, hosts, ips string }

// writeInputs gives every tool the first n hosts: a master config and
// roster (no sudo: every tool runs as the login user), a host:port list
// for the floor and an address list for ssh.
func writeInputs(dir string, c *testhosts.Cluster, n int) (inputs, error) {
	in := inputs{etc: filepath.Join(dir, "etc"), hosts: filepath.Join(dir, "hosts.txt"), ips: filepath.Join(dir, "ips.txt")}
	if err := os.MkdirAll(in.etc, 0o700); err != nil {
		return in, err
	}
	rosterPath := filepath.Join(dir, "roster")
	master := fmt.Sprintf("pki_dir: %s/pki\ncachedir: %s/cache\nknown_hosts_file: %s\nroster_file: %s\nssh_log_file: %s/ssh.log\n",
		dir, dir, c.KnownHostsPath(), rosterPath, dir)
	var hosts, ips, roster strings.Builder
	for _, h := range c.Hosts()[:n] {
		fmt.Fprintf(&hosts, "%s\n", h.Addr)
		fmt.Fprintf(&ips, "%s\n", h.IP)
		fmt.Fprintf(&roster, "%s:\n  host: %s\n  port: %d\n  user: %s\n  priv: %s\n", h.ID, h.IP, h.Port, c.User(), c.KeyPath())
	}
	for path, body := range map[string]string{filepath.Join(in.etc, "master"): master, rosterPath: roster.String(),
		in.hosts: hosts.String(), in.ips: ips.String()} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			return in, err
		}
	}
	return in, nil
}

func tail(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}

func load() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
