package thin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/version"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/thin/frame"
)

func init() {
	Register(Command{Name: "call", Summary: "run the job on stdin, write a result frame on stdout", Run: runCall})
	Register(Command{Name: "version", Summary: "print the Brine and emulated Salt versions", Run: runVersion})
	Register(Command{Name: "grains", Summary: "print this host's core grains as JSON", Run: runGrains})
	Register(Command{Name: "functions", Summary: "list the execution functions this binary links", Run: runFunctions})
}

// runCall exits with the job's retcode, as salt-call
// --retcode-passthrough does; the result frame carries it as well.
//
// With --wipe DIR it removes DIR, the thin_dir holding this binary, once
// the result is written (salt-ssh -w), as the user the job ran as, who
// owns what the job left there.
func runCall(ctx context.Context, inv *Invocation) int {
	wipeDir := ""
	if len(inv.Args) == 2 && inv.Args[0] == "--wipe" {
		wipeDir = inv.Args[1]
	} else if len(inv.Args) != 0 {
		fmt.Fprintln(inv.Stderr, "usage: salt-thin call [--wipe THIN_DIR]")
		return ExUsage
	}
	job, err := frame.ReadJob(inv.Stdin)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin call: %s\n", err)
		return ExUsage
	}
	if why := lacksYAMLFor(job.Opts); why != "" {
		// Nothing has run and nothing is wiped: the full thin runs the
		// job next, in this thin_dir.
		fmt.Fprintf(inv.Stderr, "salt-thin call: %s needs the full thin\n", why)
		if err := writeDeployLine(inv.Stdout, frame.NeedFullToken); err != nil {
			fmt.Fprintf(inv.Stderr, "salt-thin call: %s\n", err)
			return ExGeneric
		}
		return frame.ExitThinDeploy
	}
	if wipeDir != "" {
		defer wipe(wipeDir, inv.Stderr)
	}
	res := Execute(ctx, job, Options{Registry: modules.Default, Log: inv.Stderr})
	if err := frame.Write(inv.Stdout, res); err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin call: write result: %s\n", err)
		return ExGeneric
	}
	return res.Retcode
}

// wipe removes dir, but only when it is the directory this binary runs
// from: a wrong argument must never delete anything else. The two are
// compared as files, not names, because os.Executable resolves symlinks
// that thin_dir's path may go through; dir itself must not be a symlink
// (RemoveAll would remove only the link), which the controller's
// prelude refuses anyway.
func wipe(dir string, stderr io.Writer) {
	self, err := os.Executable()
	if err != nil || !sameDir(dir, filepath.Dir(self)) {
		fmt.Fprintf(stderr, "salt-thin call: not wiping %s: it does not hold this binary\n", dir)
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(stderr, "salt-thin call: wipe: %s\n", err)
	}
}

// runFunctions prints every registered function, one per line, whether
// or not its module applies to this host: salt-ssh's tests compare the
// core flavor's list with what the controller expects of it.
func runFunctions(_ context.Context, inv *Invocation) int {
	for _, m := range modules.Default.Modules() {
		for _, f := range modules.Default.Functions(m) {
			fmt.Fprintln(inv.Stdout, f)
		}
	}
	return ExOK
}

// sameDir reports whether dir, not followed if it is a symlink, is the
// existing directory self.
func sameDir(dir, self string) bool {
	a, err := os.Lstat(dir)
	if err != nil || !a.IsDir() {
		return false
	}
	b, err := os.Stat(self)
	return err == nil && os.SameFile(a, b)
}

func runVersion(_ context.Context, inv *Invocation) int {
	// Printing the marker keeps it in the binary for salt-ssh to find.
	fmt.Fprintf(inv.Stdout, "salt-thin %s (Salt %s, %s)\n", version.Brine, version.Salt, strings.Trim(version.ThinMarker, "\x00"))
	return ExOK
}

func runGrains(ctx context.Context, inv *Invocation) int {
	g, err := coregrains.Gather(ctx, coregrains.GatherOptions{})
	if err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin grains: %s\n", err)
		return ExGeneric
	}
	enc := json.NewEncoder(inv.Stdout)
	enc.SetIndent("", "    ")
	if err := enc.Encode(g); err != nil {
		return ExGeneric
	}
	return ExOK
}
