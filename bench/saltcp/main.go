// Command saltcp measures salt-cp: a real master and N salt-minion
// processes on loopback, each with a private tmpfs at the destination
// (one mount namespace per minion, so root is needed), and the median
// wall time to put one file on all of them:
//
//   - salt-cp -C (Salt's default: gzip level 9, 96 KiB chunks),
//   - salt-cp -C -n (no compression),
//   - salt-cp -C -n with salt_cp_chunk_size 1 MiB,
//   - salt cp.get_file salt://… : the minions pull the same file from
//     the master's file server instead, the other way to ship it;
//   - salt-cp --relay (Brine's own, docs/RELAY.md): salt-cp sends each
//     chunk about once and the minions pass them on to each other.
//
// A second table gives the bytes the master's host sent for each: the
// master process's wchar (its sockets and its job cache; /proc/<pid>/io)
// plus, for --relay, the chunk bytes salt-cp itself sent (its log).
//
// No Salt master can run here, so there is no Salt column.
//
// Every run checks the SHA-256 on each minion.
//
//	go run ./bench/saltcp -n 5,10 -size 50 -reps 3
package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

func main() {
	ns := flag.String("n", "5,10", "comma-separated minion counts")
	size := flag.Int("size", 50, "file size in MiB")
	reps := flag.Int("reps", 3, "repetitions per cell")
	flag.Parse()
	r := &clustertest.Standalone{Prefix: "saltcp-bench"}
	code := 0
	func() {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintln(os.Stderr, "saltcp:", p)
				code = 1
			}
		}()
		bench(r, *ns, *size, *reps)
	}()
	r.Close()
	os.Exit(code)
}

func bench(r *clustertest.Standalone, nsFlag string, size, reps int) {
	var counts []int
	for _, f := range strings.Split(nsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			r.Fatalf("bad -n %q", f)
		}
		counts = append(counts, n)
	}
	c := clustertest.New(r, "auto_accept: True\n", "salt-cp")
	c.RunTimeout = 10 * time.Minute
	dest := filepath.Join(c.Dir, "dest")
	if err := os.Mkdir(dest, 0o755); err != nil {
		r.Fatal(err)
	}
	var ids []string
	for i := 1; i <= slices.Max(counts); i++ {
		id := fmt.Sprintf("m%d", i)
		ids = append(ids, id)
		c.StartMinionWrapped(id, c.MinionConf(id, id, ""), "unshare", "-m", "--propagation", "private",
			"sh", "-c", "mount -t tmpfs tmpfs "+dest+` && exec "$0" "$@"`)
	}
	c.PingUntil("*", ids...)
	src := filepath.Join(c.Dir, "srv/salt/big.bin")
	sum := writeFile(r, src, size<<20)
	bigChunks := filepath.Join(c.Dir, "master-1m")
	conf, err := os.ReadFile(filepath.Join(c.Dir, "master/master"))
	if err != nil {
		r.Fatal(err)
	}
	os.Mkdir(bigChunks, 0o700)
	if err := os.WriteFile(filepath.Join(bigChunks, "master"), append(conf, "\nsalt_cp_chunk_size: 1048576\n"...), 0o600); err != nil {
		r.Fatal(err)
	}
	fmt.Printf("### salt-cp of a %d MiB file (half random, half text), %d repetitions, %s, load %s\n\n",
		size, reps, time.Now().UTC().Format("2006-01-02 15:04Z"), loadavg())
	fmt.Println("| minions | salt-cp -C (gzip, 96 KiB) | -C -n (96 KiB) | -C -n, 1 MiB chunks | cp.get_file (pull) | salt-cp --relay | gzip / -n | 96 KiB / 1 MiB | push -C / pull | -C -n 1 MiB / --relay |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	target := dest + "/big.bin"
	var uplink []string
	for _, n := range counts {
		tgt := strings.Join(ids[:n], ",")
		variants := [][]string{
			{"salt-cp", "-C", "-L", tgt, src, target},
			{"salt-cp", "-C", "-n", "-L", tgt, src, target},
			{"salt-cp", "-C", "-n", "-L", tgt, src, target, "-c", bigChunks},
			{"salt", "-L", tgt, "cp.get_file", "salt://big.bin", target, "-t", "120"},
			{"salt-cp", "--relay", "-l", "info", "-L", tgt, src, target},
		}
		var med []time.Duration
		row := fmt.Sprintf("| %d |", n)
		for _, v := range variants {
			var times []time.Duration
			var sent []int64
			for range reps {
				c.Run("salt", "-L", tgt, "cmd.run", "rm -f "+target)
				before := wchar(r, c.MasterPID())
				start := time.Now()
				out, code := c.Run(v[0], v[1:]...)
				times = append(times, time.Since(start))
				if code != 0 {
					r.Fatalf("%v: exit %d\n%s", v, code, out)
				}
				sent = append(sent, wchar(r, c.MasterPID())-before+relayBytes(out))
				check(r, c, tgt, target, sum, n, out)
			}
			slices.Sort(times)
			slices.Sort(sent)
			med = append(med, times[len(times)/2])
			row += fmt.Sprintf(" %.0f MiB |", float64(sent[len(sent)/2])/(1<<20))
		}
		uplink = append(uplink, row)
		fmt.Printf("| %d | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %.2f | %.2f | %.2f | %.2f |\n", n, med[0].Seconds(), med[1].Seconds(),
			med[2].Seconds(), med[3].Seconds(), med[4].Seconds(), med[0].Seconds()/med[1].Seconds(), med[1].Seconds()/med[2].Seconds(),
			med[0].Seconds()/med[3].Seconds(), med[2].Seconds()/med[4].Seconds())
	}
	fmt.Printf("\nBytes the master's host sent (median; master wchar + salt-cp's relay chunks), file %d MiB, load %s:\n\n", size, loadavg())
	fmt.Println("| minions | -C | -C -n | -C -n, 1 MiB | cp.get_file | --relay |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, row := range uplink {
		fmt.Println(row)
	}
}

// wchar is the bytes process pid has written (/proc/<pid>/io).
func wchar(r *clustertest.Standalone, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		r.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// relayStats is salt-cp --relay's closing log line.
var relayStats = regexp.MustCompile(`relay: controller sent \d+ chunks \((\d+) bytes\)`)

// relayBytes is what salt-cp --relay says it sent itself; 0 for others.
func relayBytes(out string) int64 {
	m := relayStats.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// check asks every minion for the file's SHA-256.
func check(r *clustertest.Standalone, c *clustertest.Cluster, tgt, path, sum string, n int, copyOut string) {
	out, _ := c.Run("salt", "-L", tgt, "cmd.run", "sha256sum "+path)
	if got := strings.Count(out, sum); got != n {
		r.Fatalf("%d of %d minions have the file:\n%s\ncopy said:\n%s", got, n, out, copyOut)
	}
}

func writeFile(r *clustertest.Standalone, path string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b[:n/2])
	copy(b[n/2:], bytes.Repeat([]byte("brine salt-cp benchmark line\n"), n/2/29+1))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		r.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
