// Command stateapply compares `salt-ssh '*' state.apply app` with the
// equivalent Ansible playbook on the same real sshd hosts, at the same
// parallelism (--max-procs = forks): a 20-state SLS of 16 file.managed
// from jinja templates, a file.directory and 3 cmd.run with creates,
// against 16 template tasks, a file task and 3 command tasks with
// creates. Each repetition starts from hosts without the files (first
// run) and then runs again with nothing to change (second run); the
// tools take turns within each repetition. The target is Brine
// at most 1/10 of Ansible's wall time.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/brinesalt/brine/bench/stateapply/sshside"
)

func main() {
	hosts := flag.Int("hosts", 50, "number of hosts")
	par := flag.Int("P", 50, "parallelism of both tools (salt-ssh --max-procs, Ansible forks)")
	bin := flag.String("bin", "bin", "directory with salt-ssh and salt-thin-linux-*")
	reps := flag.Int("reps", 5, "first/second run pairs of Brine")
	ansibleReps := flag.Int("ansible-reps", 3, "first/second run pairs of Ansible")
	timeout := flag.Duration("timeout", 10*time.Minute, "bound on every run")
	memLimit := flag.Int64("mem-limit-mb", sshside.MemLimit>>20, "kill a run whose processes reach this resident memory (MiB; 0: no limit)")
	flag.Parse()
	sshside.MemLimit = *memLimit << 20
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *hosts, *par, *bin, *reps, *ansibleReps, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "stateapply:", err)
		os.Exit(1)
	}
}

// target is where both tools put the application on every host.
const target = "/tmp/stateapply"

func run(ctx context.Context, hosts, par int, bin string, reps, ansibleReps int, timeout time.Duration) (err error) {
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
	playbook, err := writeInputs(e)
	if err != nil {
		return err
	}
	tools := []*sshside.Tool{brineTool(ctx, e, bin, par, reps), ansibleTool(e, bin, par, playbook, ansibleReps)}
	// A failed run still leaves the table of what was measured.
	cerr := sshside.Compare(ctx, e, tools, timeout)
	fmt.Printf("### `state.apply` of a 20-state SLS on %d hosts, parallelism %d (medians; Brine %d runs, Ansible %d)\n\n",
		hosts, par, reps, ansibleReps)
	sshside.Print(os.Stdout, tools)
	return cerr
}

// wipe removes what the states created, through salt-ssh's raw mode.
func wipe(e *sshside.Env, bin string, par int) func(context.Context) error {
	return func(ctx context.Context) error {
		return e.Raw(ctx, bin, par, "rm -rf "+target)
	}
}

func brineTool(ctx context.Context, e *sshside.Env, bin string, par, reps int) *sshside.Tool {
	t := &sshside.Tool{Name: "Brine salt-ssh state.apply", Reps: reps, Reset: wipe(e, bin, par),
		Next: func() (sshside.Command, func()) { return e.StateApply(bin, par, "app"), nil }}
	if err := e.ProbeStateApply(ctx, bin, "app"); err != nil {
		t.Skip = err.Error()
	} else if err := e.WarmThin(ctx, bin, par); err != nil {
		t.Skip = err.Error()
	}
	return t
}

func ansibleTool(e *sshside.Env, bin string, par int, playbook string, reps int) *sshside.Tool {
	return &sshside.Tool{Name: "Ansible ansible-playbook", Reps: reps, Peer: true, Reset: wipe(e, bin, par),
		Next: func() (sshside.Command, func()) {
			cmd, controlDir := e.Playbook(par, playbook)
			return cmd, func() { sshside.CloseMasters(context.Background(), controlDir) }
		}}
}
