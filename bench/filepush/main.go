// Command filepush measures the release-artifact job: one 50 MB file from
// the salt:// file server to every host, with `salt-ssh '*' state.apply
// push` (a file.managed of salt://release/artifact.bin) against Ansible's
// copy module, at the same parallelism, first to hosts without the file
// and then again when every host has it (which should move next to
// nothing: the table gives the bytes that crossed the cluster's bridge).
// OpenSSH's scp through xargs -P is the floor for the first run; it
// copies again every time. The tools take turns within each repetition.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/brinesalt/brine/bench/stateapply/sshside"
)

// dest is where every tool puts the artifact on each host.
const dest = "/tmp/artifact.bin"

func main() {
	hosts := flag.Int("hosts", 50, "number of hosts")
	par := flag.Int("P", 50, "parallelism of every tool (salt-ssh --max-procs, Ansible forks, xargs -P)")
	bin := flag.String("bin", "bin", "directory with salt-ssh and salt-thin-linux-*")
	size := flag.Int("mb", 50, "artifact size in MiB")
	reps := flag.Int("reps", 3, "first/second run pairs of Brine and scp")
	ansibleReps := flag.Int("ansible-reps", 3, "first/second run pairs of Ansible")
	timeout := flag.Duration("timeout", 10*time.Minute, "bound on every run")
	memLimit := flag.Int64("mem-limit-mb", sshside.MemLimit>>20, "kill a run whose processes reach this resident memory (MiB; 0: no limit)")
	flag.Parse()
	sshside.MemLimit = *memLimit << 20
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *hosts, *par, *bin, *size, *reps, *ansibleReps, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "filepush:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, hosts, par int, bin string, size, reps, ansibleReps int, timeout time.Duration) (err error) {
	bin, err = filepath.Abs(bin)
	if err != nil {
		return err
	}
	e, err := sshside.Start(ctx, hosts)
	defer func() {
		if cerr := e.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close cluster: %w", cerr)
		}
	}()
	if err != nil {
		return err
	}
	in, err := writeInputs(e, size)
	if err != nil {
		return err
	}
	reset := func(ctx context.Context) error { return e.Raw(ctx, bin, par, "rm -f "+dest) }
	brine := &sshside.Tool{Name: "Brine salt-ssh state.apply (file.managed)", Reps: reps, Reset: reset,
		Next: func() (sshside.Command, func()) { return e.StateApply(bin, par, "push"), nil }}
	if err := e.ProbeStateApply(ctx, bin, "push"); err != nil {
		brine.Skip = err.Error()
	} else if err := e.WarmThin(ctx, bin, par); err != nil {
		brine.Skip = err.Error()
	}
	ansible := &sshside.Tool{Name: "Ansible ansible-playbook (copy)", Reps: ansibleReps, Peer: true, Reset: reset,
		Next: func() (sshside.Command, func()) {
			cmd, controlDir := e.Playbook(par, in.playbook)
			return cmd, func() { sshside.CloseMasters(context.Background(), controlDir) }
		}}
	scp := &sshside.Tool{Name: "OpenSSH: xargs -P scp (floor; copies every time)", Reps: reps, Reset: reset,
		Next: func() (sshside.Command, func()) { return scpCommand(e, in, par), nil }}
	tools := []*sshside.Tool{scp, brine, ansible}
	// A failed run still leaves the table of what was measured.
	cerr := sshside.Compare(ctx, e, tools, timeout)
	fmt.Printf("### %d MiB salt:// file to %d hosts, parallelism %d (medians; Brine and scp %d runs, Ansible %d)\n\n",
		size, hosts, par, reps, ansibleReps)
	sshside.Print(os.Stdout, tools)
	return cerr
}

type inputs struct{ artifact, playbook, ips string }

// writeInputs writes the artifact (incompressible, as release tarballs
// are, from a fixed seed), the SLS push.sls, the playbook and the host
// address list for scp.
func writeInputs(e *sshside.Env, mb int) (inputs, error) {
	in := inputs{artifact: filepath.Join(e.FileRoot, "release", "artifact.bin"),
		playbook: filepath.Join(e.Work, "ansible", "push.yml"), ips: filepath.Join(e.Work, "ips.txt")}
	data := make([]byte, mb<<20)
	rng := rand.NewChaCha8([32]byte{'b', 'r', 'i', 'n', 'e'})
	rng.Read(data)
	sls := fmt.Sprintf("artifact:\n  file.managed:\n    - name: %s\n    - source: salt://release/artifact.bin\n    - mode: '0644'\n", dest)
	play := fmt.Sprintf("- hosts: all\n  gather_facts: false\n  tasks:\n    - name: artifact\n      ansible.builtin.copy:\n        src: %s\n        dest: %s\n        mode: '0644'\n",
		in.artifact, dest)
	var ips strings.Builder
	for _, h := range e.Cluster.Hosts() {
		fmt.Fprintf(&ips, "%s\n", h.IP)
	}
	files := map[string][]byte{in.artifact: data, filepath.Join(e.FileRoot, "push.sls"): []byte(sls),
		in.playbook: []byte(play), in.ips: []byte(ips.String())}
	for path, body := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return in, err
		}
		if err := os.WriteFile(path, body, 0o644); err != nil {
			return in, err
		}
	}
	return in, nil
}

// scpCommand copies the artifact to every host with OpenSSH, the same
// key, user and known_hosts; "ok" on stdout means every scp succeeded.
func scpCommand(e *sshside.Env, in inputs, par int) sshside.Command {
	c := e.Cluster
	scp := fmt.Sprintf("scp -q -i %s -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s %s %s@{}:%s",
		c.KeyPath(), c.KnownHostsPath(), in.artifact, c.User(), dest)
	n := len(c.Hosts())
	return sshside.Command{
		Argv: []string{"sh", "-c", fmt.Sprintf("xargs -P %d -I{} %s < %s && echo ok", par, scp, in.ips)},
		Parse: func(out []byte) (sshside.Outcome, error) {
			o := sshside.Outcome{Hosts: n, Changed: n}
			if strings.TrimSpace(string(out)) == "ok" {
				o.HostsOK = n
			}
			return o, nil
		},
	}
}
