package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// writeFloor is the least any tool must do to reach the highstate's end
// state: for every file, read it and stop if it already holds the
// contents, else write a temporary file beside it, set its mode and
// rename it into place, as an atomic file.managed does. It runs as its
// own process so it pays the same process start-up as salt-call.
func writeFloor(out string, t treeShape) error {
	for g := range t.groups {
		dir := filepath.Join(out, fmt.Sprint(g))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for j := range t.perGroup {
			if err := floorFile(filepath.Join(dir, fmt.Sprintf("%d.txt", j)), []byte(fileContents(g, j))); err != nil {
				return err
			}
		}
	}
	return nil
}

func floorFile(path string, want []byte) error {
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, want) {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".floor-")
	if err != nil {
		return err
	}
	_, err = f.Write(want)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
