package testhosts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// RunDir holds one work directory per cluster (c<C>) and the lock file that
// serialises allocation and stale cleanup across processes. Without root the
// harness uses runDir() instead, a per-user directory under os.TempDir.
const RunDir = "/run/brine-testhosts"

func runDir() string {
	if os.Geteuid() == 0 {
		return RunDir
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("brine-testhosts-%d", os.Geteuid()))
}

// maxClusters bounds cluster numbers, 1..maxClusters. Small clusters
// (at most maxSmallHosts hosts) take 1..firstLarge-1 and the /24
// 10.250.<C>.0/24; the top numbers firstLarge..maxClusters are kept for
// large clusters (up to MaxHosts), each with a /16 of its own,
// 10.<501-C>.0.0/16 (10.251 to 10.254), so that every cluster number,
// and every kernel object named after one, stays in the range that
// copies of the harness built before large clusters existed recognise as
// live (they sweep brth<C> objects of any other number as stale). A
// Linux bridge holds at most 1024 ports (BR_MAX_PORTS), which bounds
// MaxHosts.
const (
	maxClusters = 250
	firstLarge  = 247
)

// maxSmallHosts is the most hosts a /24 holds: minus network, bridge and
// broadcast.
const maxSmallHosts = 253

func isLarge(c int) bool { return c >= firstLarge }

// largeOctet is the second octet of large cluster c's /16.
func largeOctet(c int) int { return 2*maxClusters + 1 - c }

// prefixLen is the length of cluster c's subnet prefix.
func prefixLen(c int) int {
	if isLarge(c) {
		return 16
	}
	return 24
}

// Names of the kernel objects a cluster C owns; Cleanup recognises stale ones
// by these patterns.
var (
	netnsRe  = regexp.MustCompile(`^brth(\d+)-host\d+$`)
	bridgeRe = regexp.MustCompile(`^brth(\d+)$`)
	vethRe   = regexp.MustCompile(`^vth(\d+)h\d+$`)
)

func bridgeName(c int) string         { return fmt.Sprintf("brth%d", c) }
func netnsName(c, i int) string       { return fmt.Sprintf("brth%d-host%d", c, i) }
func vethName(c, i int) string        { return fmt.Sprintf("vth%dh%d", c, i) }
func workDirOf(c int) string          { return filepath.Join(runDir(), fmt.Sprintf("c%d", c)) }
func hostID(i int) string             { return fmt.Sprintf("host%d", i) }
func ownerFile(workDir string) string { return filepath.Join(workDir, "owner.json") }

// hostIP is host i's address: 10.250.C.(i+1) in a small cluster,
// 10.<501-C>.x.y with x*256+y = i+1 in a large one.
func hostIP(c, i int) string {
	if isLarge(c) {
		return fmt.Sprintf("10.%d.%d.%d", largeOctet(c), (i+1)>>8, (i+1)&255)
	}
	return fmt.Sprintf("10.250.%d.%d", c, i+1)
}

// bridgeIP is the controller's address on cluster c's bridge.
func bridgeIP(c int) string {
	if isLarge(c) {
		return fmt.Sprintf("10.%d.0.1", largeOctet(c))
	}
	return fmt.Sprintf("10.250.%d.1", c)
}

// subnetOf is cluster c's subnet in CIDR notation.
func subnetOf(c int) string {
	if isLarge(c) {
		return fmt.Sprintf("10.%d.0.0/16", largeOctet(c))
	}
	return fmt.Sprintf("10.250.%d.0/24", c)
}

// hostMAC is the fixed MAC address of host i's eth0, so the bridge side
// can hold a permanent neighbour entry for it (see setupHostLinks).
func hostMAC(c, i int) string {
	return fmt.Sprintf("02:b7:%02x:%02x:%02x:01", c&255, (i>>8)&255, i&255)
}

// bridgeMAC is the fixed MAC address of cluster c's bridge.
func bridgeMAC(c int) string { return fmt.Sprintf("02:b7:%02x:00:00:00", c&255) }

// hostIndex returns I for "hostI", or 0.
func hostIndex(id string) int {
	var i int
	if _, err := fmt.Sscanf(id, "host%d", &i); err != nil || hostID(i) != id {
		return 0
	}
	return i
}

// owner records who keeps a cluster alive: a live process, or (detached) the
// existence of a state file that points back at the work directory.
type owner struct {
	Owner     procRef `json:"owner"`
	Detached  bool    `json:"detached"`
	StateFile string  `json:"state_file,omitempty"`
}

// withLock runs fn holding the exclusive lock on runDir()/lock.
func withLock(ctx context.Context, fn func() error) error {
	if err := os.MkdirAll(runDir(), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", runDir(), err)
	}
	f, err := os.OpenFile(filepath.Join(runDir(), "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("open lock: %w", err)
	}
	defer f.Close()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return fmt.Errorf("wait for lock: %w", err)
		}
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return fn()
}

// allocate reserves a cluster number and its work directory, owned by this
// process, cleaning up stale clusters first: a small number for up to
// maxSmallHosts hosts, a large one beyond. Callers hold the lock.
func allocate(ctx context.Context, logf func(string, ...any), hosts int) (int, error) {
	cleanupLocked(ctx, logf)
	me, err := refOf(os.Getpid())
	if err != nil {
		return 0, err
	}
	lo, hi := 1, firstLarge-1
	if hosts > maxSmallHosts {
		lo, hi = firstLarge, maxClusters
	}
	for c := lo; c <= hi; c++ {
		dir := workDirOf(c)
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if subnetInUse(c) || linksOf(c) || len(clusterNetns(c)) > 0 {
			continue
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return 0, fmt.Errorf("create %s: %w", dir, err)
		}
		if err := writeJSON(ownerFile(dir), owner{Owner: me}, 0o644); err != nil {
			return 0, fmt.Errorf("write owner: %w", err)
		}
		return c, nil
	}
	return 0, fmt.Errorf("testhosts: all cluster numbers %d..%d in use", lo, hi)
}

// subnetInUse reports whether an interface of the root namespace already has
// an address in cluster c's /24 (someone else's network).
func subnetInUse(c int) bool {
	_, sn, _ := net.ParseCIDR(subnetOf(c))
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && sn.Contains(ipn.IP) {
			return true
		}
	}
	return false
}

// live reports whether the cluster in workDir still has an owner.
func live(workDir string) bool {
	var o owner
	if err := readJSON(ownerFile(workDir), &o); err != nil {
		// Just created and not yet written: give it the benefit of the doubt
		// only while it is young.
		st, serr := os.Stat(workDir)
		return serr == nil && time.Since(st.ModTime()) < 10*time.Second
	}
	if !o.Detached {
		return o.Owner.alive()
	}
	var s state
	if err := readJSON(o.StateFile, &s); err != nil {
		return false
	}
	return s.WorkDir == workDir
}

// Cleanup removes what crashed or abandoned clusters left behind: processes,
// veths, bridges, network namespaces and work directories of every cluster
// whose owner is gone (a dead owner process, or for a detached cluster a
// missing state file), and kernel objects with the harness's name prefixes
// that belong to no cluster at all. Live clusters, including those of other
// concurrent test processes, are left alone.
func Cleanup(ctx context.Context) error {
	return withLock(ctx, func() error {
		cleanupLocked(ctx, func(string, ...any) {})
		return nil
	})
}

func cleanupLocked(ctx context.Context, logf func(string, ...any)) {
	livec := map[int]bool{}
	for c := 1; c <= maxClusters; c++ {
		dir := workDirOf(c)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		if live(dir) {
			livec[c] = true
			continue
		}
		logf("testhosts: removing stale cluster %d (%s)", c, dir)
		_ = teardown(ctx, c, dir)
	}
	if !ownsNetwork() {
		return
	}
	// Objects whose cluster has no live work directory.
	stale := map[int]bool{}
	if ents, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range ents {
			if m := netnsRe.FindStringSubmatch(e.Name()); m != nil {
				stale[atoi(m[1])] = true
			}
		}
	}
	if ifs, err := net.Interfaces(); err == nil {
		for _, i := range ifs {
			for _, re := range []*regexp.Regexp{bridgeRe, vethRe} {
				if m := re.FindStringSubmatch(i.Name); m != nil {
					stale[atoi(m[1])] = true
				}
			}
		}
	}
	for c := range stale {
		if !livec[c] {
			logf("testhosts: removing stale network objects of cluster %d", c)
			_ = teardownNet(ctx, c)
		}
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// ownsNetwork reports whether this process's clusters can own kernel
// network objects. Only root creates namespaces, bridges and veths, and a
// harness without root keeps its clusters in its own runDir(), numbered
// independently of root's: its cluster 1 is not root's cluster 1. Were it
// to sweep or tear down brth<C>-* objects, it would take root's live
// clusters for stale ones and SIGTERM every process of theirs it may
// signal, which is every process of the shared login user (what once
// killed a session of another package's live cluster while TestUnprivileged
// ran, see docs/NOTES.md).
func ownsNetwork() bool { return os.Geteuid() == 0 }

// teardown kills every process of cluster c (recorded in the per-host pid
// files of workDir, and whatever runs in its namespaces), removes its
// network objects and finally its work directory.
func teardown(ctx context.Context, c int, workDir string) error {
	var errs []error
	hosts, _ := filepath.Glob(filepath.Join(workDir, "host*"))
	refs := clusterProcs(hosts)
	if ownsNetwork() {
		refs = append(refs, netnsProcs(c)...)
	}
	if err := killAll(ctx, refs); err != nil {
		errs = append(errs, err)
	}
	if ownsNetwork() {
		if err := teardownNet(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(workDir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", workDir, err))
	}
	return errors.Join(errs...)
}

// clusterNetns lists the network namespaces of cluster c.
func clusterNetns(c int) []string {
	ents, _ := os.ReadDir("/run/netns")
	var out []string
	for _, e := range ents {
		if m := netnsRe.FindStringSubmatch(e.Name()); m != nil && atoi(m[1]) == c {
			out = append(out, e.Name())
		}
	}
	return out
}

// netnsProcs lists the processes in cluster c's network namespaces, found
// by comparing every process's ns/net link with the namespaces' inodes.
func netnsProcs(c int) []procRef {
	want := map[string]bool{}
	for _, ns := range clusterNetns(c) {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join("/run/netns", ns), &st); err == nil {
			want[fmt.Sprintf("net:[%d]", st.Ino)] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var refs []procRef
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns/net")); err == nil && want[l] {
			if r, err := refOf(pid); err == nil {
				refs = append(refs, r)
			}
		}
	}
	return refs
}

// teardownNet deletes cluster c's network namespaces (after killing
// whatever still runs in them) and bridge. The veths are not deleted one by
// one (50 ms each in the kernel): each dies with its namespace, shortly
// after; allocate skips cluster numbers whose links still linger.
func teardownNet(ctx context.Context, c int) error {
	var errs []error
	if err := killAll(ctx, netnsProcs(c)); err != nil {
		errs = append(errs, err)
	}
	var lines []string
	for _, ns := range clusterNetns(c) {
		lines = append(lines, "netns del "+ns)
	}
	if _, err := net.InterfaceByName(bridgeName(c)); err == nil {
		lines = append(lines, "link del "+bridgeName(c))
	}
	if len(lines) > 0 {
		if err := ipBatch(ctx, lines, "-force"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// linksOf reports whether any bridge or veth of cluster c exists.
func linksOf(c int) bool {
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		for _, re := range []*regexp.Regexp{bridgeRe, vethRe} {
			if m := re.FindStringSubmatch(i.Name); m != nil && atoi(m[1]) == c {
				return true
			}
		}
	}
	return false
}
