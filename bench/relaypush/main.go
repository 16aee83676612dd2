// Command relaypush measures release distribution past the uplink
// (issue 18): one incompressible salt:// file to every host with the
// controller's link capped by tc (standing for a jump host's uplink),
// by `salt-ssh state.apply` pushing every byte (Brine push), by
// `salt-ssh --relay` (hosts pass verified chunks on), by an rsync-over-ssh
// loop through xargs -P, and by Ansible's copy when it is installed; and
// the physical limit, size / uplink, which is what sending each byte once
// costs. The tools take turns within each repetition.
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brinesalt/brine/bench/stateapply/sshside"
)

// dest is where every tool puts the release on each host.
const dest = "/tmp/release.bin"

type config struct {
	hosts, par, mib             int
	bin, rate, tools            string
	reps, pushReps, ansibleReps int
	floorSample                 int
	logLevel                    string
	timeout                     time.Duration
	rateBits                    float64
}

func main() {
	var c config
	flag.IntVar(&c.hosts, "hosts", 200, "number of hosts")
	flag.IntVar(&c.par, "P", 100, "parallelism of every tool (salt-ssh --max-procs, Ansible forks, xargs -P)")
	flag.StringVar(&c.bin, "bin", "bin", "directory with salt-ssh and salt-thin-linux-*")
	flag.IntVar(&c.mib, "mb", 20, "release size in MiB")
	flag.StringVar(&c.rate, "rate", "200mbit", "the controller's uplink (tc rate)")
	flag.IntVar(&c.reps, "reps", 3, "first/second run pairs of Brine relay")
	flag.IntVar(&c.pushReps, "push-reps", 1, "first/second run pairs of the tools that push every byte")
	flag.IntVar(&c.ansibleReps, "ansible-reps", 1, "first/second run pairs of Ansible (when installed)")
	flag.StringVar(&c.tools, "tools", "relay,push,rsync,ansible", "the tools to run, so one size's table can be split over runs that each fit the bench lock's 10 minutes")
	flag.IntVar(&c.floorSample, "floor-sample", 40, "hosts' worth of work to time for the machine's floor (0: skip it)")
	flag.StringVar(&c.logLevel, "log-level", "info", "salt-ssh's log_level_logfile; at debug the failed peer fetches are tallied by the agents' reasons")
	flag.DurationVar(&c.timeout, "timeout", 15*time.Minute, "bound on every run")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "relaypush:", err)
		os.Exit(1)
	}
}

// runs reports whether -tools names the tool.
func (c config) runs(tool string) bool {
	return slices.Contains(strings.Split(c.tools, ","), tool)
}

var rateRE = regexp.MustCompile(`^([0-9.]+)(bit|kbit|mbit|gbit)$`)

// bitsPerSecond reads a tc rate.
func bitsPerSecond(rate string) (float64, error) {
	m := rateRE.FindStringSubmatch(rate)
	if m == nil {
		return 0, fmt.Errorf("rate %q is not like 200mbit", rate)
	}
	n, err := strconv.ParseFloat(m[1], 64)
	return n * map[string]float64{"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[m[2]], err
}

func run(ctx context.Context, c config) (err error) {
	if c.rateBits, err = bitsPerSecond(c.rate); err != nil {
		return err
	}
	if c.bin, err = filepath.Abs(c.bin); err != nil {
		return err
	}
	// The floor first, on a machine this run does not load yet.
	var floor []floorResult
	if c.floorSample > 0 {
		dir, err := os.MkdirTemp("", "relaypush-floor-")
		if err != nil {
			return err
		}
		floor, err = measureFloor(ctx, dir, releaseData(c.mib), c.floorSample)
		os.RemoveAll(dir)
		if err != nil {
			return err
		}
	}
	e, err := sshside.Start(ctx, c.hosts)
	defer func() {
		if cerr := e.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close cluster: %w", cerr)
		}
	}()
	if err != nil {
		return err
	}
	ips, err := writeInputs(e, c.mib)
	if err != nil {
		return err
	}
	// The relay's own account of each run ("relay: run done …") is in
	// the log at info; each failed peer fetch, with why, at debug.
	if err := appendFile(filepath.Join(e.Etc, "master"), "log_level_logfile: "+c.logLevel+"\n"); err != nil {
		return err
	}
	// The thin binary goes out before the cap: the tables time the release.
	if err := e.WarmThin(ctx, c.bin, c.par); err != nil {
		return err
	}
	if err := e.Cluster.CapController(ctx, c.rate); err != nil {
		return err
	}
	reset := func(ctx context.Context) error {
		return e.Raw(ctx, c.bin, c.par, "rm -rf "+dest+" /var/tmp/.brine_*_salt/files")
	}
	push := &sshside.Tool{Name: "Brine salt-ssh state.apply (push)", Reps: c.pushReps, Reset: reset,
		Next: func() (sshside.Command, func()) { return e.StateApply(c.bin, c.par, "release"), nil }}
	relay := &sshside.Tool{Name: "Brine salt-ssh --relay state.apply", Reps: c.reps, Reset: reset,
		Next: func() (sshside.Command, func()) {
			cmd := e.StateApply(c.bin, c.par, "release")
			cmd.Argv = append([]string{cmd.Argv[0], "--relay"}, cmd.Argv[1:]...)
			return cmd, nil
		}}
	rsync := &sshside.Tool{Name: "rsync over ssh, xargs -P", Reps: c.pushReps, Reset: reset, Peer: true,
		Next: func() (sshside.Command, func()) { return rsyncCommand(e, ips, c.par), nil }}
	tools := []*sshside.Tool{relay, push, rsync}
	switch _, err := os.Stat("/usr/bin/ansible-playbook"); {
	case !c.runs("ansible"):
	case err == nil:
		play := filepath.Join(e.Work, "ansible", "release.yml")
		ansible := &sshside.Tool{Name: "Ansible ansible-playbook (copy)", Reps: c.ansibleReps, Reset: reset,
			Next: func() (sshside.Command, func()) {
				cmd, controlDir := e.Playbook(c.par, play)
				return cmd, func() { sshside.CloseMasters(context.Background(), controlDir) }
			}}
		tools = append(tools, ansible)
	default:
		tools = append(tools, &sshside.Tool{Name: "Ansible ansible-playbook (copy)", Skip: "not installed on this machine"})
	}
	for name, t := range map[string]*sshside.Tool{"relay": relay, "push": push, "rsync": rsync} {
		if !c.runs(name) {
			t.Skip = "not in -tools this run"
		}
	}
	cerr := sshside.Compare(ctx, e, tools, c.timeout)
	printRelayLog(filepath.Join(e.Work, "ssh.log"))
	limit := time.Duration(float64(c.mib<<20) * 8 / c.rateBits * float64(time.Second))
	fmt.Printf("### %d MiB release to %d hosts, controller capped at %s, parallelism %d (medians; relay %d runs, the others %d; × column: against the rsync loop)\n\n",
		c.mib, c.hosts, c.rate, c.par, c.reps, c.pushReps)
	sshside.Print(os.Stdout, tools)
	fmt.Printf("\nPhysical limit (size / uplink, each byte sent once): %.2f s.", limit.Seconds())
	for _, t := range []*sshside.Tool{relay, push, rsync} {
		if w := t.FirstWall(); w > 0 {
			fmt.Printf(" %s first run: %.1f× the limit.", t.Name, float64(w)/float64(limit))
		}
	}
	fmt.Println()
	if len(floor) > 0 {
		printFloor(floor, c.floorSample, c.mib, c.hosts)
		bound := max(limit, floor[len(floor)-1].perHost*time.Duration(c.hosts))
		if w := relay.FirstWall(); w > 0 {
			fmt.Printf("\nRelay first run against max(uplink limit, the machine's floor with fsync) = %.1f s: %.1f×.\n", bound.Seconds(), float64(w)/float64(bound))
		}
	}
	return cerr
}

// relayDone is the relay's summary line in salt-ssh's log.
var relayDone = regexp.MustCompile(`relay: run done.*`)

// printRelayLog prints the relay's summary of every relay run, in order.
func printRelayLog(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	fmt.Println("\nThe relay's own account of each run (salt-ssh's log):")
	for _, m := range relayDone.FindAll(b, -1) {
		fmt.Printf("    %s\n", m)
	}
	why := map[string]int{}
	for _, m := range fetchFailed.FindAllSubmatch(b, -1) {
		why[string(addrRE.ReplaceAll(m[1], []byte("ADDR")))]++
	}
	if len(why) > 0 {
		fmt.Println("\nFailed peer fetches by reason (all runs):")
		for _, k := range slices.Sorted(maps.Keys(why)) {
			fmt.Printf("    %6d  %s\n", why[k], k)
		}
	}
}

// fetchFailed is a failed peer fetch in salt-ssh's debug log, and
// addrRE the addresses in its reason, so reasons tally across hosts.
var (
	fetchFailed = regexp.MustCompile(`relay: fetch failed.* why="?([^"\n]*)`)
	addrRE      = regexp.MustCompile(`[0-9]+(\.[0-9]+){3}(:[0-9]+)?`)
)

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// releaseData is the release: incompressible, from a fixed seed.
func releaseData(mib int) []byte {
	data := make([]byte, mib<<20)
	rand.NewChaCha8([32]byte{'r', 'e', 'l', 'e', 'a', 's', 'e'}).Read(data)
	return data
}

// writeInputs writes the release (incompressible, from a fixed seed),
// release.sls, the playbook and the host address list; it returns the
// list's path.
func writeInputs(e *sshside.Env, mib int) (string, error) {
	artifact := filepath.Join(e.FileRoot, "release.bin")
	ips := filepath.Join(e.Work, "ips.txt")
	data := releaseData(mib)
	sls := fmt.Sprintf("release:\n  file.managed:\n    - name: %s\n    - source: salt://release.bin\n    - mode: '0644'\n", dest)
	play := fmt.Sprintf("- hosts: all\n  gather_facts: false\n  tasks:\n    - name: release\n      ansible.builtin.copy:\n        src: %s\n        dest: %s\n        mode: '0644'\n", artifact, dest)
	var list strings.Builder
	for _, h := range e.Cluster.Hosts() {
		fmt.Fprintf(&list, "%s\n", h.IP)
	}
	files := map[string][]byte{artifact: data, filepath.Join(e.FileRoot, "release.sls"): []byte(sls),
		filepath.Join(e.Work, "ansible", "release.yml"): []byte(play), ips: []byte(list.String())}
	for path, body := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, body, 0o644); err != nil {
			return "", err
		}
	}
	return ips, nil
}

// rsyncCommand copies the release to every host with rsync over OpenSSH,
// the same key, user and known_hosts; "ok" means every copy succeeded.
func rsyncCommand(e *sshside.Env, ips string, par int) sshside.Command {
	c := e.Cluster
	ssh := fmt.Sprintf("ssh -i %s -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s", c.KeyPath(), c.KnownHostsPath())
	src := filepath.Join(e.FileRoot, "release.bin")
	n := len(c.Hosts())
	return sshside.Command{
		Argv: []string{"sh", "-c", fmt.Sprintf("xargs -P %d -I{} rsync -q -e '%s' %s %s@{}:%s < %s && echo ok", par, ssh, src, c.User(), dest, ips)},
		Parse: func(out []byte) (sshside.Outcome, error) {
			o := sshside.Outcome{Hosts: n, Changed: n}
			if strings.TrimSpace(string(out)) == "ok" {
				o.HostsOK = n
			}
			return o, nil
		},
	}
}
