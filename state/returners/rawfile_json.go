package returners

import (
	"context"
	"fmt"
	"os"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

func init() { Default.Register("rawfile_json", RawfileJSON) }

// RawfileJSON is salt/returners/rawfile_json.py: the return as one JSON
// line appended to rawfile_json.filename (default /var/log/salt/events)
// under an exclusive flock, as salt.utils.files.flopen takes, so lines
// from concurrent jobs never interleave. The whole line goes out in one
// write on an O_APPEND descriptor.
func RawfileJSON(_ context.Context, env *modules.Env, ret *ordered.Map) error {
	o := Options(env, "rawfile_json", ret, []string{"filename"}, map[string]any{"filename": "/var/log/salt/events"})
	name := fmt.Sprint(o["filename"])
	line, err := py.JSON(ret, py.JSONOptions{Indent: -1})
	if err != nil {
		return fmt.Errorf("encode return for %s: %w", name, err)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("could not write to rawfile_json file: %w", err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		return fmt.Errorf("could not write to rawfile_json file %s: %w", name, err)
	}
	return f.Close()
}
