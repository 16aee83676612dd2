package thin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/brinesalt/brine/internal/version"
	"github.com/brinesalt/brine/state/grains"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/thin/frame"
)

func init() {
	Register(Command{Name: "call", Summary: "run the job on stdin, write a result frame on stdout", Run: runCall})
	Register(Command{Name: "version", Summary: "print the Brine and emulated Salt versions", Run: runVersion})
	Register(Command{Name: "grains", Summary: "print this host's core grains as JSON", Run: runGrains})
}

// runCall exits with the job's retcode, as salt-call
// --retcode-passthrough does; the result frame carries it as well.
func runCall(ctx context.Context, inv *Invocation) int {
	job, err := frame.ReadJob(inv.Stdin)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin call: %s\n", err)
		return ExUsage
	}
	res := Execute(ctx, job, Options{Registry: modules.Default, Log: inv.Stderr})
	if err := frame.Write(inv.Stdout, res); err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin call: write result: %s\n", err)
		return ExGeneric
	}
	return res.Retcode
}

func runVersion(_ context.Context, inv *Invocation) int {
	fmt.Fprintf(inv.Stdout, "salt-thin %s (Salt %s)\n", version.Brine, version.Salt)
	return ExOK
}

func runGrains(ctx context.Context, inv *Invocation) int {
	g, err := grains.Gather(ctx, grains.GatherOptions{})
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
