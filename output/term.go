package output

import (
	"io"
	"os"

	"golang.org/x/term"
)

// UseColor is the colour choice of salt/output/__init__.py get_printout:
// --force-color wins, then --no-color (or color: False in the config,
// passed as cfgColor), else colour when stdout is a terminal. Salt looks
// at its stdout even when --out-file is given, so a file written from a
// terminal gets colour codes.
func UseColor(stdout io.Writer, noColor, forceColor bool, cfgColor any) bool {
	switch {
	case forceColor:
		return true
	case noColor:
		return false
	}
	if b, ok := cfgColor.(bool); ok {
		return b
	}
	f, ok := stdout.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
