package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules"
)

// ExtmodsDir is the extension_modules option, else <cachedir>/extmods.
func ExtmodsDir(opts *ordered.Map) string {
	if s, _ := opts.Value("extension_modules").(string); s != "" {
		return s
	}
	cachedir, _ := opts.Value("cachedir").(string)
	if cachedir == "" {
		cachedir = modules.DefaultCachedir
	}
	return filepath.Join(cachedir, "extmods")
}

// GrainsDir is where saltutil.sync_grains puts custom grain executables
// and LoadCustomGrains looks for them.
func GrainsDir(opts *ordered.Map) string { return filepath.Join(ExtmodsDir(opts), "grains") }

// CustomGrainTimeout bounds each custom grain executable.
const CustomGrainTimeout = 30 * time.Second

// LoadCustomGrains runs the executables in dir (not its
// subdirectories), sorted by name, each with CustomGrainTimeout, and
// merges the mappings they print as JSON or YAML, later files replacing
// earlier top-level keys. A missing dir gives an empty map. Entries that
// fail are left out; their errors are joined in the returned error,
// which accompanies the grains of the others.
func LoadCustomGrains(ctx context.Context, dir string) (*ordered.Map, error) {
	out := ordered.New()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("read custom grains %s: %w", dir, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var errs []error
	for _, e := range entries {
		if !isExecutable(e) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		m, err := runGrain(ctx, filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		coregrains.Overlay(out, m)
	}
	return out, errors.Join(errs...)
}

func isExecutable(e fs.DirEntry) bool {
	if !e.Type().IsRegular() {
		return false
	}
	info, err := e.Info()
	return err == nil && info.Mode().Perm()&0o111 != 0
}

// runGrain runs one executable and decodes its mapping.
func runGrain(ctx context.Context, path string) (*ordered.Map, error) {
	ctx, cancel := context.WithTimeout(ctx, CustomGrainTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	cmd.Dir = filepath.Dir(path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("custom grains %s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("custom grains %s: %w: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	v, err := coregrains.DecodeYAML(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("custom grains %s: decode output: %w", path, err)
	}
	switch m := v.(type) {
	case nil:
		return ordered.New(), nil
	case *ordered.Map:
		return m, nil
	}
	return nil, fmt.Errorf("custom grains %s: output is a %T, not a mapping", path, v)
}
