package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestRemotePaths(t *testing.T) {
	src := t.TempDir()
	for _, p := range []string{"d/a", "d/sub/b", "f"} {
		os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(src, p), []byte(p), 0o600)
	}
	os.MkdirAll(filepath.Join(src, "d/empty"), 0o755)
	tests := []struct {
		name string
		src  []string
		dest string
		want map[string]string // local (relative to src) -> remote
	}{
		{"one file to a file", []string{"f"}, "/t/x", map[string]string{"f": "/t/x"}},
		{"one file to a dir", []string{"f"}, "/t/", map[string]string{"f": "/t/f"}},
		{"tree keeps its name", []string{"d", "f"}, "/t", map[string]string{
			"d/a": "/t/d/a", "d/sub/b": "/t/d/sub/b", "d/empty": "/t/d/empty", "f": "/t/f"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var abs []string
			for _, s := range tc.src {
				abs = append(abs, filepath.Join(src, s))
			}
			files, empty, err := listFiles(abs)
			if err != nil {
				t.Fatal(err)
			}
			isDir := destIsDir(files, empty, tc.dest)
			got := map[string]string{}
			for fn := range files {
				r, _ := remotePath(fn, abs, tc.dest, isDir)
				got[strings.TrimPrefix(fn, src+"/")] = r
			}
			for _, d := range empty {
				r, _ := remotePath(d, abs, tc.dest, isDir)
				got[strings.TrimPrefix(d, src+"/")] = r
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Error(d)
			}
		})
	}
	if _, _, err := listFiles([]string{filepath.Join(src, "missing")}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing source: %v", err)
	}
	files, _, _ := listFiles([]string{filepath.Join(src, "f")})
	if files[filepath.Join(src, "f")] != fs.FileMode(0o600) {
		t.Errorf("mode = %v", files)
	}
}

// TestOptionTable pins salt-cp's options to SaltCPOptionParser's, and
// Brine's own --relay (docs/RELAY.md).
func TestOptionTable(t *testing.T) {
	var o options
	fs := newFlagSet(&o, nil)
	var got []string
	fs.VisitAll(func(f *pflag.Flag) {
		got = append(got, strings.TrimSpace(f.Shorthand+" --"+f.Name))
	})
	sort.Strings(got)
	want := []string{"--delimiter", "--no-color", "--out", "--out-indent", "--output", "--relay", "C --chunked", "E --pcre",
		"G --grain", "L --list", "N --nodegroup", "P --grain-pcre", "c --config-dir", "l --log-level", "n --no-compression", "t --timeout"}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}
