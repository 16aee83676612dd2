// Command highstate measures a masterless highstate end to end: it
// generates a file_roots tree of 1,000 test and file.managed states with
// require, sls, watch and onchanges requisites, and runs Brine's
// `salt-call --local state.apply` on it, first into an empty directory
// and then again with nothing to change. Each run is a fresh process; the
// table gives the median wall time and peak RSS of the process, their
// ratios to a floor measured in the same run (this program re-executed
// to write the same 500 files the plainest way, or to read and compare
// them) and to the targets of the performance issue (200 ms, 100 MB).
// The tools take turns within every repetition, so machine noise hits
// them alike. Real Salt joins the table when a salt-call other than
// Brine's is on PATH; it cannot be installed on this machine.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Targets from the performance issue.
const (
	wallTarget = 200 * time.Millisecond
	rssTarget  = 100 << 20
)

func main() {
	bin := flag.String("bin", "bin", "directory with Brine's salt-call")
	baseline := flag.String("baseline", "", "directory with another build of Brine's salt-call (before a change), run side by side")
	reps := flag.Int("reps", 5, "repetitions of each run")
	groups := flag.Int("groups", 10, "SLS files in the highstate")
	perGroup := flag.Int("per-group", 50, "test states (and as many file states) per SLS")
	timeout := flag.Duration("timeout", time.Minute, "bound on every run")
	dump := flag.String("dump", "", "only write the minion config (DIR/etc) and tree (DIR/srv) into DIR, to run by hand")
	floorOut := flag.String("floor-write", "", "internal: be the floor, writing the tree's files into this directory")
	flag.Parse()
	shape := treeShape{groups: *groups, perGroup: *perGroup}
	var err error
	switch {
	case *floorOut != "":
		err = writeFloor(*floorOut, shape)
	case *dump != "":
		_, err = newTree(*dump, shape, true)
	default:
		err = run(context.Background(), *bin, *baseline, *reps, shape, *timeout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "highstate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, baseline string, reps int, shape treeShape, timeout time.Duration) error {
	work, err := os.MkdirTemp("", "highstate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	brine, err := filepath.Abs(filepath.Join(bin, "salt-call"))
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	base := ""
	if baseline != "" {
		if base, err = filepath.Abs(filepath.Join(baseline, "salt-call")); err != nil {
			return err
		}
	}
	runners, saltErr, err := setup(work, self, brine, base, shape)
	if err != nil {
		return err
	}
	if err := repeat(ctx, runners, reps, timeout); err != nil {
		return err
	}
	fmt.Printf("### Masterless highstate: `salt-call --local state.apply`, %d states (%d SLS files), medians of %d runs\n\n",
		shape.states(), shape.groups, reps)
	fmt.Println("| command | run | wall | min – max | × floor | × 200 ms target | CPU (user+sys) | × floor CPU | peak RSS | × 100 MB target | states | changed |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	floor := runners[0]
	for _, r := range runners {
		r.print(floor)
	}
	if saltErr != nil {
		fmt.Printf("| Salt salt-call --local state.apply | — | not run: %v | | | | | | | | | |\n", saltErr)
	}
	return nil
}

// spec describes a runner before its tree exists.
type spec struct {
	name  string
	fqdns bool // enable_fqdns_grains stays on
	argv  func(*tree) []string
	check bool
}

// setup makes one runner per tool, each with its own tree in work: the
// floor first, Brine with and without fqdns grains, real Salt if found
// (saltErr says why not), and a baseline build of Brine when given.
func setup(work, self, brine, baseline string, shape treeShape) (runners []*runner, saltErr, err error) {
	floorArgv := func(t *tree) []string {
		return []string{self, "-floor-write", t.out, "-groups", fmt.Sprint(shape.groups), "-per-group", fmt.Sprint(shape.perGroup)}
	}
	saltCall := func(path string) func(*tree) []string {
		return func(t *tree) []string {
			return []string{path, "-c", t.etc, "--local", "--retcode-passthrough", "--out", "json", "state.apply"}
		}
	}
	specs := []spec{
		{"Go floor: write the 500 files / compare them", true, floorArgv, false},
		{"Brine salt-call, default minion config", true, saltCall(brine), true},
		{"Brine salt-call, enable_fqdns_grains: False", false, saltCall(brine), true},
	}
	if baseline != "" {
		specs = append(specs, spec{"Brine baseline build, default minion config", true, saltCall(baseline), true})
	}
	salt, saltErr := realSalt(brine)
	if saltErr == nil {
		specs = append(specs, spec{"Salt salt-call, default minion config", true, saltCall(salt), true})
	}
	for i, sp := range specs {
		t, err := newTree(filepath.Join(work, fmt.Sprint(i)), shape, sp.fqdns)
		if err != nil {
			return nil, saltErr, err
		}
		runners = append(runners, &runner{name: sp.name, tree: t, argv: sp.argv(t), check: sp.check})
	}
	return runners, saltErr, nil
}

// realSalt finds a salt-call on PATH that is not Brine's.
func realSalt(brine string) (string, error) {
	p, err := exec.LookPath("salt-call")
	if err != nil {
		return "", fmt.Errorf("no Salt installed here (no PyPI access, not packaged in Debian 12)")
	}
	if abs, _ := filepath.Abs(p); abs == brine {
		return "", fmt.Errorf("only Brine's salt-call is on PATH")
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil || containsBrine(string(out)) {
		return "", fmt.Errorf("the salt-call on PATH (%s) is Brine's or does not run", p)
	}
	return p, nil
}

// repeat runs every runner's first and second run once per repetition,
// the runners taking turns.
// repeat runs every runner once per repetition, starting each
// repetition with the next runner: ext4 makes a new inode slower the
// more inodes were deleted nearby in the last seconds (recently_deleted
// in ext4_create), so whoever runs right after the others' resets pays
// for them; rotating spreads that cost over all runners.
func repeat(ctx context.Context, runners []*runner, reps int, timeout time.Duration) error {
	for rep := range reps {
		for i := range runners {
			r := runners[(rep+i)%len(runners)]
			if err := r.once(ctx, timeout); err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
		}
	}
	return nil
}
