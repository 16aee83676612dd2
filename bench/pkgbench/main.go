// Command pkgbench measures Brine's packages (`make packages`): each
// package's size compressed (the file apt or yum downloads) and on disk
// once installed (dpkg's Installed-Size, rpm's SIZE), and the time dpkg
// takes to install the minion and the master in a harness host with a
// private /usr and /var (testhosts PrivateSystem), purging between
// repetitions. It prints Markdown tables for docs/BENCHMARKS.md.
//
//	go run ./bench/pkgbench -dist dist -reps 5
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

func main() {
	dist := flag.String("dist", "dist", "the packages: DIST/deb, DIST/rpm")
	reps := flag.Int("reps", 5, "install repetitions")
	flag.Parse()
	ctx := context.Background()
	if err := sizes(*dist); err != nil {
		fmt.Fprintln(os.Stderr, "pkgbench:", err)
		os.Exit(1)
	}
	if err := installTimes(ctx, *dist, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "pkgbench:", err)
		os.Exit(1)
	}
}

// sizes prints one row per package file: compressed and installed.
func sizes(dist string) error {
	fmt.Println("| package | format | arch | compressed | installed |")
	fmt.Println("|---|---|---|--:|--:|")
	for _, f := range []string{"deb", "rpm"} {
		files, _ := filepath.Glob(filepath.Join(dist, f, "*."+f))
		sort.Strings(files)
		for _, p := range files {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			name, arch, installed, err := describe(f, p)
			if err != nil {
				return err
			}
			fmt.Printf("| %s | %s | %s | %s | %s |\n", name, f, arch, mib(st.Size()), mib(installed))
		}
	}
	return nil
}

// describe reads a package's name, architecture and installed size.
func describe(format, path string) (name, arch string, installed int64, err error) {
	var out []byte
	if format == "deb" {
		out, err = exec.Command("dpkg-deb", "-W", "--showformat", "${Package} ${Architecture} ${Installed-Size}", path).Output()
	} else {
		out, err = exec.Command("rpm", "-qp", "--qf", "%{NAME} %{ARCH} %{SIZE}", path).Output()
	}
	if err != nil {
		return "", "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 3 {
		return "", "", 0, fmt.Errorf("read %s: %q", path, out)
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if format == "deb" {
		n *= 1024 // Installed-Size is in KiB
	}
	return f[0], f[1], n, err
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// installTimes installs and purges sets of packages in a fresh harness
// host, reps times each, and prints the median and range.
func installTimes(ctx context.Context, dist string, reps int) error {
	debs, _ := filepath.Glob(filepath.Join(dist, "deb", "*_"+runtime.GOARCH+".deb"))
	if len(debs) == 0 {
		return fmt.Errorf("no %s .debs in %s/deb", runtime.GOARCH, dist)
	}
	work, err := os.MkdirTemp("", "pkgbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	c, err := testhosts.Start(ctx, testhosts.Config{N: 1, Dir: filepath.Join(work, "hosts"),
		Defaults: testhosts.HostOptions{PrivateSystem: true}})
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	tmp, err := c.HostPath("host1", "/tmp")
	if err != nil {
		return err
	}
	for _, d := range debs {
		b, err := os.ReadFile(d)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, filepath.Base(d)), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("\n`dpkg -i` in a harness host (private /usr, /var; %d repetitions, purged between), %d cores, load %s\n\n",
		reps, runtime.NumCPU(), loadavg())
	fmt.Println("| packages | median | min | max |")
	fmt.Println("|---|--:|--:|--:|")
	for _, set := range [][]string{{"salt-common", "salt-minion"}, {"salt-common", "salt-master"},
		{"salt-common", "salt-master", "salt-minion", "salt-ssh"}} {
		var times []time.Duration
		for i := 0; i < reps; i++ {
			d, err := timeInstall(ctx, c, set)
			if err != nil {
				return err
			}
			times = append(times, d)
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		fmt.Printf("| %s | %s | %s | %s |\n", strings.Join(set, " + "), ms(times[len(times)/2]), ms(times[0]), ms(times[len(times)-1]))
	}
	return nil
}

// timeInstall times one dpkg -i of set, then purges it untimed.
func timeInstall(ctx context.Context, c *testhosts.Cluster, set []string) (time.Duration, error) {
	var files []string
	for _, p := range set {
		files = append(files, "/tmp/"+p+"_*_"+runtime.GOARCH+".deb")
	}
	start := time.Now()
	if out, err := c.Exec(ctx, "host1", "DEBIAN_FRONTEND=noninteractive dpkg -i "+strings.Join(files, " ")+" >/dev/null"); err != nil {
		return 0, fmt.Errorf("install %v: %w: %s", set, err, out)
	}
	d := time.Since(start)
	rev := make([]string, len(set))
	for i, p := range set {
		rev[len(set)-1-i] = p
	}
	if out, err := c.Exec(ctx, "host1", "dpkg -P "+strings.Join(rev, " ")+" >/dev/null"); err != nil {
		return 0, fmt.Errorf("purge %v: %w: %s", set, err, out)
	}
	return d, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
