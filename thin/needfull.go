package thin

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules/saltutil/proc"
	"github.com/brinesalt/brine/thin/frame"
)

// lacksYAMLFor says why a binary without the YAML codec (the core
// flavor, see thin/core) cannot run a job on this host, or "" when it
// can: the host has a grains file or custom grain executables, whose
// YAML only the full thin reads. The job has not started then, so the
// controller can send the full thin and run it there instead.
func lacksYAMLFor(opts *ordered.Map) string {
	if coregrains.HasYAML() {
		return ""
	}
	if path := coregrains.GrainsFilePath(opts); exists(path) {
		return "grains file " + path
	}
	if entries, err := os.ReadDir(proc.GrainsDir(opts)); err == nil && len(entries) > 0 {
		return "custom grains in " + proc.GrainsDir(opts)
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeDeployLine prints the deploy line (frame.DeployMarker) with flag,
// naming this host as the probe script does: kernel and machine as uname
// reports them, and the best decompressor on PATH.
func writeDeployLine(w io.Writer, flag string) error {
	sys, machine, err := uname()
	if err != nil {
		return err
	}
	words := []string{frame.DeployMarker, sys, machine}
	for _, tool := range []string{"zstd", "gzip"} {
		if _, err := exec.LookPath(tool); err == nil {
			words = append(words, tool)
			break
		}
	}
	_, err = fmt.Fprintln(w, strings.Join(append(words, flag), " "))
	return err
}
