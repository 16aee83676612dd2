package main

import (
	"context"
	"fmt"
	"os"

	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/internal/winsession"
	"github.com/brinesalt/brine/minion"
	"github.com/brinesalt/brine/minion/winservice"
)

// platformMain runs the Windows mode commands (install, remove, start,
// stop, session install|remove) and, when the Service Control Manager
// started this process, the minion as the salt-minion service.
func platformMain(args []string) (int, bool) {
	// The mode commands come first: the service itself is registered
	// with daemon options only (-c, -l), never a command.
	if len(args) == 0 || !modeCommands[args[0]] {
		if !winsession.IsService() {
			return 0, false
		}
		err := winservice.Run(func(ctx context.Context) int {
			return minion.Main(ctx, args, os.Stdout, os.Stderr)
		})
		if err != nil {
			// Not the SCM's process after all (the dispatcher could not
			// connect): run as a plain process.
			return 0, false
		}
		return 0, true
	}
	ctx, stop := shutdown.Context(nil, "")
	defer stop()
	var err error
	switch args[0] {
	case "install":
		exe, xerr := winservice.Executable()
		if xerr != nil {
			return report(xerr), true
		}
		err = winservice.Install(exe, args[1:])
	case "remove":
		err = winservice.Remove(ctx)
	case "start":
		err = winservice.Start(ctx)
	case "stop":
		err = winservice.Stop(ctx)
	case "session":
		return session(ctx, args[1:]), true
	case "help":
		winservice.Usage(os.Stdout)
		return 0, true
	}
	return report(err), true
}

var modeCommands = map[string]bool{"install": true, "remove": true, "start": true, "stop": true, "session": true, "help": true}

func session(ctx context.Context, args []string) int {
	if len(args) == 0 {
		winservice.Usage(os.Stderr)
		return 2
	}
	switch args[0] {
	case "install":
		exe, err := winservice.Executable()
		if err != nil {
			return report(err)
		}
		if err := winservice.SessionInstall(ctx, exe, args[1:]); err != nil {
			return report(err)
		}
		fmt.Println("salt-minion starts at this user's logon:", winservice.SessionCommand())
		return 0
	case "remove":
		return report(winservice.SessionRemove())
	}
	winservice.Usage(os.Stderr)
	return 2
}

func report(err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, "salt-minion:", err)
		return 1
	}
	return 0
}
