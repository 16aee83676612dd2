// Command salt-thin is Brine's remote runtime: the static binary the
// controller places on a target and runs over SSH (see package thin).
// The same binary is the promoted minion: installed as salt-minion (by
// minion.bootstrap), or run as `salt-thin minion`, it runs the ZeroMQ
// minion daemon instead of one job.
package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/minion"
	_ "github.com/brinesalt/brine/state/modules/allmodules"
	// The database returners, for the promoted minion's --return
	// mysql/pgjsonb and ext_job_cache: 4.5 MB of the full thin's 16.9 MB
	// (docs/BENCHMARKS.md); the core flavor has none.
	_ "github.com/brinesalt/brine/state/returners/sqlreturners"
	_ "github.com/brinesalt/brine/state/states/allstates"
	"github.com/brinesalt/brine/syndic"
	"github.com/brinesalt/brine/thin"
	_ "github.com/brinesalt/brine/thin/promote"
)

func main() {
	sig, stop := shutdown.Context(nil, "") // first signal stops the job, second exits 130
	ctx, cancel := context.WithCancel(sig)
	var code int
	if args, ok := minionArgs(os.Args); ok {
		// A daemon outlives the session that started it: no hangup watch.
		code = minion.Main(ctx, args, os.Stdout, os.Stderr)
	} else if args, ok := syndicArgs(os.Args); ok {
		code = syndic.Main(ctx, args, os.Stdout, os.Stderr)
	} else {
		thin.WatchHangup(cancel) // the SSH session went away: stop the job
		code = thin.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	}
	cancel()
	stop()
	os.Exit(code)
}

// minionArgs reports whether the binary runs as the minion daemon —
// called salt-minion, or with the minion subcommand — and the
// salt-minion arguments.
func minionArgs(argv []string) ([]string, bool) {
	if filepath.Base(argv[0]) == "salt-minion" {
		return argv[1:], true
	}
	if len(argv) > 1 && argv[1] == "minion" {
		return argv[2:], true
	}
	return nil, false
}

// syndicArgs reports whether the binary runs as the syndic daemon —
// called salt-syndic, or with the syndic subcommand — and the
// salt-syndic arguments.
func syndicArgs(argv []string) ([]string, bool) {
	if filepath.Base(argv[0]) == "salt-syndic" {
		return argv[1:], true
	}
	if len(argv) > 1 && argv[1] == "syndic" {
		return argv[2:], true
	}
	return nil, false
}
