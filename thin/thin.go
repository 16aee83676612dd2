package thin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
)

// Exit codes, from salt/defaults/exitcodes.py.
const (
	ExOK      = 0
	ExGeneric = 1
	ExUsage   = 64
)

// Invocation is what a subcommand gets: its arguments (after the
// subcommand name) and the standard streams.
type Invocation struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Command is one subcommand of the thin binary.
type Command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, inv *Invocation) int
}

var (
	mu       sync.RWMutex
	commands = map[string]Command{}
)

// Register adds a subcommand; it panics on an empty or duplicate name,
// which is a programmer error found at init.
func Register(c Command) {
	if c.Name == "" || c.Run == nil {
		panic("thin: bad command registration")
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := commands[c.Name]; dup {
		panic(fmt.Sprintf("thin: command %q registered twice", c.Name))
	}
	commands[c.Name] = c
}

// Main runs the subcommand named by args[0] (args exclude the program
// name) and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	scrubEnv()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return ExUsage
		}
		return ExOK
	}
	mu.RLock()
	c, ok := commands[args[0]]
	mu.RUnlock()
	if !ok {
		fmt.Fprintf(stderr, "salt-thin: unknown command %q\n", args[0])
		usage(stderr)
		return ExUsage
	}
	return c.Run(ctx, &Invocation{Args: args[1:], Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

func usage(w io.Writer) {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: salt-thin <command> [args]")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Summary)
	}
}
