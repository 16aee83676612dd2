// Package daemon holds the command line the Brine daemons share
// (salt-master, and salt-minion whether run as its own command or as the
// promoted thin binary): Salt's -c/--config-dir, -l/--log-level and
// -V/--version.
package daemon

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logging"
)

// Start parses a daemon's arguments (without the program name) and opens
// its console logger. When the daemon must not run — bad flags, or
// --version printed — ok is false and code is the exit code.
func Start(name string, args []string, stdout, stderr io.Writer) (confDir string, log *slog.Logger, code int, ok bool) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.StringP("config-dir", "c", config.DefaultDir, "configuration directory")
	level := fs.StringP("log-level", "l", "warning", "console log level")
	version := fs.BoolP("version", "V", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", name, err.Error())
		return "", nil, 2, false
	}
	if *version {
		fmt.Fprintf(stdout, "%s (Brine)\n", name)
		return "", nil, 0, false
	}
	log, err := logging.New(stderr, *level)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return "", nil, 2, false
	}
	return *dir, log, 0, true
}
