// Command sshbench measures salt-ssh side by side with its peers on the
// same real sshd hosts in one run: Brine's salt-ssh (warm and cold), a
// minimal Go x/crypto/ssh floor, OpenSSH through xargs -P, and Ansible
// from Debian, all at the same parallelism. For every command it records
// wall time, controller CPU (user+sys of the process tree) and peak RSS,
// and prints medians and ratios to the floor as a Markdown table.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

type sample struct {
	wall, cpu time.Duration
	rssKB     int64
	failed    int // runs that exited non-zero (tolerant scenarios only)
}

type scenario struct {
	name  string
	cmd   []string
	env   []string
	prep  func() error // untimed, before each repetition
	reps  int
	floor bool
	// tolerant records a run that exited non-zero (some hosts failed, as
	// Ansible does under load) instead of aborting; the row says so.
	tolerant bool
	// settle waits, before the first repetition, until ext4 has forgotten
	// the inodes the rows before deleted (wiping thin_dirs): for 30 s it
	// scans past recently deleted inodes on every file it creates, which
	// would bill this row (salt-ssh's job cache, Ansible's temp files)
	// for the last row's clean-up.
	settle bool
}

// ext4Recentcy is how long ext4 avoids reusing a deleted inode
// (fs/ext4/ialloc.c recently_deleted: dirty_expire_interval, 30 s).
const ext4Recentcy = 31 * time.Second

func main() {
	sizes := flag.String("hosts", "10,50,100", "host counts")
	bin := flag.String("bin", "bin", "directory with salt-ssh, salt-thin-linux-*")
	floorBin := flag.String("floor", "", "gofloor binary")
	reps := flag.Int("reps", 5, "repetitions of each fast command")
	ansibleReps := flag.Int("ansible-reps", 3, "repetitions of each Ansible command")
	par := flag.Int("P", 100, "parallelism for every tool")
	peers := flag.Bool("peers", true, "also run OpenSSH and Ansible (slow)")
	flag.Parse()
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			fatal(err)
		}
		if err := benchSize(n, *bin, *floorBin, *reps, *ansibleReps, *par, *peers); err != nil {
			fatal(err)
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "sshbench:", err)
	os.Exit(1)
}

func benchSize(n int, bin, floorBin string, reps, ansibleReps, par int, peers bool) error {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "sshbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	c, err := testhosts.Start(ctx, testhosts.Config{N: n, Dir: filepath.Join(work, "hosts")})
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	files, err := writeInputs(work, c)
	if err != nil {
		return err
	}
	saltSSH := func(args ...string) []string {
		return append([]string{filepath.Join(bin, "salt-ssh"), "-c", files.etc, "--max-procs", strconv.Itoa(par), "--out", "json"}, args...)
	}
	saltSSHSudo := func(args ...string) []string { return append(saltSSH("--sudo"), args...) }
	command := func(argv []string) *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }
	wipe := func() error {
		if out, err := command(saltSSH("-r", "*", "sudo -n rm -rf /var/tmp/.brine_*_salt")).CombinedOutput(); err != nil {
			return fmt.Errorf("%w: %s", err, tail(string(out)))
		}
		return nil
	}
	// firstContact also forgets what the controller cached of the hosts
	// (their grains), as for hosts never seen before.
	firstContact := func() error {
		if err := os.RemoveAll(filepath.Join(work, "cache", "minions")); err != nil {
			return err
		}
		return wipe()
	}
	sshCmd := fmt.Sprintf("ssh -q -i %s -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s %s@{} true",
		c.KeyPath(), c.KnownHostsPath(), c.User())
	ansible := func(args ...string) []string {
		return append([]string{"ansible", "all", "-i", files.inventory, "-f", strconv.Itoa(par), "-o"}, args...)
	}
	ansibleEnv := []string{"ANSIBLE_HOST_KEY_CHECKING=False", "ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3",
		"ANSIBLE_LOCAL_TEMP=" + filepath.Join(work, "ansible-tmp"), "ANSIBLE_SSH_ARGS=-o ControlMaster=no"}
	// The warm rows come before the rows that wipe the hosts, and the
	// first row after those waits for ext4 to settle (scenario.settle).
	// The cold rows pay for their own wipes, as `salt-ssh -w` runs do.
	scenarios := []scenario{
		{name: "Go floor: connect + run `true`", cmd: []string{floorBin, "-hosts", files.hosts, "-key", c.KeyPath(), "-user", c.User(), "-P", strconv.Itoa(par)}, reps: reps, floor: true},
		// settle: the last host count's hosts were just removed.
		{name: "Brine salt-ssh test.ping (warm)", cmd: saltSSH("*", "test.ping"), reps: reps, settle: true},
		{name: "Brine salt-ssh cmd.run 'uname -r' (warm)", cmd: saltSSH("*", "cmd.run", "uname -r"), reps: reps},
		{name: "Brine salt-ssh --sudo test.ping (warm)", cmd: saltSSHSudo("*", "test.ping"), reps: reps},
		{name: "Brine salt-ssh test.ping (cold: thin upload)", cmd: saltSSH("*", "test.ping"), prep: wipe, reps: reps},
		{name: "Brine salt-ssh test.ping (first contact: thin upload, nothing cached)", cmd: saltSSH("*", "test.ping"), prep: firstContact, reps: reps},
		// A function the core flavor lacks: the full thin goes out, as for
		// state.apply; afterwards the hosts hold the full thin.
		{name: "Brine salt-ssh sys.list_functions (cold: full thin upload)", cmd: saltSSH("*", "sys.list_functions"), prep: wipe, reps: reps},
		{name: "Brine salt-ssh test.ping (warm, full thin)", cmd: saltSSH("*", "test.ping"), reps: reps, settle: true},
	}
	peerScenarios := []scenario{
		{name: "OpenSSH: xargs -P ssh host true", cmd: []string{"sh", "-c", fmt.Sprintf("xargs -P %d -I{} %s < %s", par, sshCmd, files.ips)}, reps: reps},
		{name: "Ansible -m ping", cmd: ansible("-m", "ping"), env: ansibleEnv, reps: ansibleReps, tolerant: true},
		{name: "Ansible -m command -a 'uname -r'", cmd: ansible("-m", "command", "-a", "uname -r"), env: ansibleEnv, reps: ansibleReps, tolerant: true},
	}
	if peers {
		scenarios = append(scenarios, peerScenarios...)
	}
	// Warm the thin binary once so the warm rows start warm (on the core
	// flavor, which a first test.ping leaves on the hosts).
	if out, err := command(saltSSH("*", "test.ping")).CombinedOutput(); err != nil {
		return fmt.Errorf("warm-up: %v: %s", err, out)
	}
	fmt.Printf("\n### %d hosts (parallelism %d, medians of the repetitions)\n\n", n, par)
	fmt.Println("| command | wall | × floor | CPU | CPU/host | × floor | peak RSS |")
	fmt.Println("|---|---|---|---|---|---|---|")
	var floor sample
	for _, s := range scenarios {
		if _, err := exec.LookPath(s.cmd[0]); err != nil {
			fmt.Printf("| %s | not run: %s not installed | | | | | |\n", s.name, s.cmd[0])
			continue
		}
		m, err := measure(s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		name := s.name
		if m.failed > 0 {
			name += fmt.Sprintf(" (%d of %d runs had failed hosts)", m.failed, s.reps)
		}
		if s.floor {
			floor = m
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %.1f MB |\n", name, ms(m.wall), ratio(m.wall, floor.wall),
			ms(m.cpu), ms(m.cpu/time.Duration(n)), ratio(m.cpu, floor.cpu), float64(m.rssKB)/1024)
	}
	printWire(filepath.Join(work, "cache", "thin"))
	return nil
}

// printWire reports what cold hosts were sent: the compressed copies
// salt-ssh made (its thin cache holds one per flavor and codec used),
// each named by the binary it decodes to, found through the cache's hash
// index, with that binary's size on disk.
func printWire(cacheDir string) {
	entries, err := os.ReadDir(cacheDir)
	if err != nil {
		return
	}
	binaries := map[string]string{} // sha256 → binary path
	if data, err := os.ReadFile(filepath.Join(cacheDir, "sums-v2.json")); err == nil {
		idx := map[string]string{}
		if json.Unmarshal(data, &idx) == nil {
			for key, sum := range idx {
				binaries[sum], _, _ = strings.Cut(key, "|")
			}
		}
	}
	fmt.Println()
	for _, e := range entries {
		name := e.Name()
		if !strings.Contains(name, ".") || strings.HasSuffix(name, ".json") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		sum, codec, _ := strings.Cut(name, ".")
		what := "unknown binary"
		if p := binaries[sum]; p != "" {
			what = filepath.Base(p)
			if st, err := os.Stat(p); err == nil {
				what += fmt.Sprintf(" (%d bytes on disk)", st.Size())
			}
		}
		fmt.Printf("Thin on the wire: %s as %s, %d bytes.\n", what, codec, info.Size())
	}
	fmt.Println()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// measure runs s.reps times and returns the median of each figure.
func measure(s scenario) (sample, error) {
	if s.settle {
		time.Sleep(ext4Recentcy)
	}
	var all []sample
	for range s.reps {
		if s.prep != nil {
			if err := s.prep(); err != nil {
				return sample{}, fmt.Errorf("prepare: %w", err)
			}
		}
		cmd := exec.Command(s.cmd[0], s.cmd[1:]...)
		cmd.Env = append(os.Environ(), s.env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			return sample{}, err
		}
		failed := 0
		if err != nil {
			if !s.tolerant {
				return sample{}, fmt.Errorf("%v: %s", err, tail(stderr.String()))
			}
			failed = 1
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		all = append(all, sample{wall: wall, cpu: cpu, rssKB: ru.Maxrss, failed: failed})
	}
	m := median(all)
	for _, x := range all {
		m.failed += x.failed
	}
	return m, nil
}

func tail(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}

func median(xs []sample) sample {
	pick := func(get func(sample) int64) int64 {
		v := make([]int64, len(xs))
		for i, x := range xs {
			v[i] = get(x)
		}
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		return v[len(v)/2]
	}
	return sample{
		wall:  time.Duration(pick(func(s sample) int64 { return int64(s.wall) })),
		cpu:   time.Duration(pick(func(s sample) int64 { return int64(s.cpu) })),
		rssKB: pick(func(s sample) int64 { return s.rssKB }),
	}
}

type inputs struct{ etc, hosts, ips, inventory string }

// writeInputs gives every tool the same hosts: a Brine master config and
// roster, a host:port list for the floor, an address list for ssh, and an
// Ansible INI inventory.
func writeInputs(work string, c *testhosts.Cluster) (inputs, error) {
	in := inputs{etc: filepath.Join(work, "etc"), hosts: filepath.Join(work, "hosts.txt"),
		ips: filepath.Join(work, "ips.txt"), inventory: filepath.Join(work, "inventory.ini")}
	if err := os.MkdirAll(in.etc, 0o700); err != nil {
		return in, err
	}
	// Every tool logs in as the same user with the same key; none uses sudo
	// unless the row says so (the floor runs `true` as that user).
	rosterPath := filepath.Join(work, "roster")
	master := fmt.Sprintf("pki_dir: %s/pki\ncachedir: %s/cache\nknown_hosts_file: %s\nroster_file: %s\nssh_log_file: %s/ssh.log\n",
		work, work, c.KnownHostsPath(), rosterPath, work)
	var hosts, ips, inv, roster strings.Builder
	inv.WriteString("[all]\n")
	for _, h := range c.Hosts() {
		fmt.Fprintf(&hosts, "%s\n", h.Addr)
		fmt.Fprintf(&ips, "%s\n", h.IP)
		fmt.Fprintf(&inv, "%s ansible_host=%s ansible_port=%d ansible_user=%s ansible_ssh_private_key_file=%s\n",
			h.ID, h.IP, h.Port, c.User(), c.KeyPath())
		fmt.Fprintf(&roster, "%s:\n  host: %s\n  port: %d\n  user: %s\n  priv: %s\n", h.ID, h.IP, h.Port, c.User(), c.KeyPath())
	}
	for path, body := range map[string]string{filepath.Join(in.etc, "master"): master, rosterPath: roster.String(), in.hosts: hosts.String(),
		in.ips: ips.String(), in.inventory: inv.String()} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			return in, err
		}
	}
	return in, nil
}
