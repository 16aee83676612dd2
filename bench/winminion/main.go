// Command winminion measures the Windows minion beside the Linux one: a
// Brine master on loopback (auto_accept) and, one at a time, the Linux
// salt-minion and salt-minion.exe under Wine (internal/testsupport/winetest:
// a throwaway prefix in a private network namespace), each
//
//   - start-up: `--version` wall time (process start to exit), the median of reps,
//   - sign-in: from starting the daemon to its first test.ping answer,
//   - idle RSS: VmRSS of the minion process 10 s after that answer, and for
//     Wine also the prefix's own processes (wineserver, services.exe, …),
//   - binary size on disk and zipped (Deflate, best compression).
//
// Results under Wine are Wine's, not Windows' (docs/WINDOWS.md).
//
//	go run ./bench/winminion -bin bin -reps 5
package main

import (
	"archive/zip"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/brinesalt/brine/internal/testsupport/winetest"
)

func main() {
	bin := flag.String("bin", "bin", "directory with salt-minion and windows-amd64/salt-minion.exe")
	reps := flag.Int("reps", 5, "repetitions of the start-up measure")
	flag.Parse()
	r := &runner{}
	code := 0
	func() {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintln(os.Stderr, "winminion:", p)
				code = 1
			}
		}()
		bench(r, *bin, *reps)
	}()
	r.close()
	os.Exit(code)
}

type row struct {
	name          string
	start, signin time.Duration
	rss, extraRSS int64
	size, zipped  int64
}

func bench(r *runner, bin string, reps int) {
	bin, _ = filepath.Abs(bin)
	linux, exe := filepath.Join(bin, "salt-minion"), filepath.Join(bin, "windows-amd64", "salt-minion.exe")
	w, err := winetest.Start(context.Background(), r.TempDir())
	if err != nil {
		r.Fatal(err)
	}
	r.Cleanup(w.Close)
	c := clustertest.NewSetup(r, clustertest.Setup{MasterConf: "auto_accept: true\n",
		MasterCommand: func(name string, args ...string) *exec.Cmd { return w.Linux(context.Background(), name, args...) }})
	rows := []row{
		measure(r, c, w, "Linux salt-minion", func(ctx context.Context, args ...string) *exec.Cmd {
			return w.Linux(ctx, linux, args...)
		}, linux, false, reps),
		measure(r, c, w, "salt-minion.exe under Wine", func(ctx context.Context, args ...string) *exec.Cmd {
			return w.Command(ctx, exe, args...)
		}, exe, true, reps),
	}
	fmt.Printf("| minion | start-up (`--version`, median of %d) | sign-in to first test.ping | idle RSS | + Wine's own processes | binary | zipped |\n", reps)
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, x := range rows {
		extra := "—"
		if x.extraRSS > 0 {
			extra = mib(x.extraRSS)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", x.name, ms(x.start), ms(x.signin), mib(x.rss), extra, mib(x.size), mib(x.zipped))
	}
	a, b := rows[0], rows[1]
	fmt.Printf("\nratios (Wine / Linux): start-up %.1f×, sign-in %.1f×, idle RSS %.1f× (%.1f× with Wine's processes), zipped size %.2f×\n",
		ratio(b.start, a.start), ratio(b.signin, a.signin), float64(b.rss)/float64(a.rss),
		float64(b.rss+b.extraRSS)/float64(a.rss), float64(b.zipped)/float64(a.zipped))
}

func measure(r *runner, c *clustertest.Cluster, w *winetest.Wine, name string,
	command func(ctx context.Context, args ...string) *exec.Cmd, path string, wine bool, reps int) row {
	x := row{name: name}
	ctx := context.Background()
	var starts []time.Duration
	for i := 0; i < reps; i++ {
		t0 := time.Now()
		if out, err := command(ctx, "--version").CombinedOutput(); err != nil {
			r.Fatalf("%s --version: %v\n%s", name, err, out)
		}
		starts = append(starts, time.Since(t0))
	}
	slices.Sort(starts)
	x.start = starts[len(starts)/2]
	id := "linux1"
	if wine {
		id = "win1"
	}
	dir := c.MinionConf(id, id, "")
	conf := dir
	if wine {
		conf = winetest.WinPath(dir)
		b, _ := os.ReadFile(filepath.Join(dir, "minion"))
		s := strings.ReplaceAll(string(b), dir+"/pki", winetest.WinPath(dir+"/pki"))
		s = strings.ReplaceAll(s, dir+"/cache", winetest.WinPath(dir+"/cache"))
		os.WriteFile(filepath.Join(dir, "minion"), []byte(s), 0o600)
	}
	t0 := time.Now()
	cmd := command(ctx, "-c", conf, "-l", "warning")
	if err := cmd.Start(); err != nil {
		r.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	c.WaitFor(id+" answers", func() bool {
		out, _ := c.Run("salt", id, "test.ping", "-t", "5")
		return strings.Contains(out, id+":\n    True")
	})
	x.signin = time.Since(t0)
	time.Sleep(10 * time.Second)
	x.rss = rss(cmd.Process.Pid)
	if wine {
		x.extraRSS = prefixRSS(w.Prefix, cmd.Process.Pid)
	}
	st, err := os.Stat(path)
	if err != nil {
		r.Fatal(err)
	}
	x.size, x.zipped = st.Size(), zipped(r, path)
	return x
}

// rss is VmRSS of pid in bytes.
func rss(pid int) int64 {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n * 1024
		}
	}
	return 0
}

// prefixRSS sums VmRSS of the prefix's other processes (their
// environment names it, or wineserver's working directory is it).
func prefixRSS(prefix string, except int) int64 {
	var sum int64
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == except {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		cwd, _ := os.Readlink("/proc/" + e.Name() + "/cwd")
		if bytes.Contains(env, []byte("WINEPREFIX="+prefix+"\x00")) || cwd == prefix {
			sum += rss(pid)
		}
	}
	return sum
}

func zipped(r *runner, path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		r.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, nil)
	f, err := zw.CreateHeader(&zip.FileHeader{Name: filepath.Base(path), Method: zip.Deflate})
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		r.Fatal(err)
	}
	return int64(buf.Len())
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
func mib(n int64) string        { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
func ratio(a, b time.Duration) float64 {
	return float64(a) / float64(b)
}

type runner struct {
	cleanups []func()
	failed   bool
}

func (r *runner) Helper()                   {}
func (r *runner) Logf(f string, a ...any)   { fmt.Fprintf(os.Stderr, f+"\n", a...) }
func (r *runner) Cleanup(f func())          { r.cleanups = append(r.cleanups, f) }
func (r *runner) Failed() bool              { return r.failed }
func (r *runner) Fatal(a ...any)            { r.failed = true; panic(fmt.Sprint(a...)) }
func (r *runner) Fatalf(f string, a ...any) { r.failed = true; panic(fmt.Sprintf(f, a...)) }
func (r *runner) TempDir() string {
	d, err := os.MkdirTemp("", "winminion-bench")
	if err != nil {
		r.Fatal(err)
	}
	r.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func (r *runner) close() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}
