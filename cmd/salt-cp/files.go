package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// errMissing is a source that does not exist; salt-cp exits 42.
var errMissing = errors.New("does not exist")

// realPath is os.path.realpath: absolute, symlinks resolved as far as
// the path exists.
func realPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// listFiles is SaltCP._list_files: every file under the sources with
// its mode, and the empty directories, both sorted.
func listFiles(src []string) (files map[string]fs.FileMode, emptyDirs []string, err error) {
	files = map[string]fs.FileMode{}
	seen := map[string]bool{}
	for _, s := range src {
		if err := recurse(s, files, seen); err != nil {
			return nil, nil, err
		}
	}
	for d := range seen {
		emptyDirs = append(emptyDirs, d)
	}
	sort.Strings(emptyDirs)
	return files, emptyDirs, nil
}

// recurse is SaltCP._recurse: a file is itself, a directory its files
// (an empty one is remembered), a missing path an error.
func recurse(path string, files map[string]fs.FileMode, empty map[string]bool) error {
	st, err := os.Stat(path)
	if err != nil {
		return &os.PathError{Op: "copy", Path: path, Err: errMissing}
	}
	if !st.IsDir() {
		files[path] = st.Mode().Perm()
		return nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	if len(ents) == 0 {
		empty[path] = true
	}
	for _, e := range ents {
		if err := recurse(filepath.Join(path, e.Name()), files, empty); err != nil {
			return err
		}
	}
	return nil
}

// pyJoin is os.path.join of two parts: b absolute replaces a, and no
// separator is added after one a already ends with.
func pyJoin(a, b string) string {
	if strings.HasPrefix(b, "/") || a == "" {
		return b
	}
	if strings.HasSuffix(a, "/") {
		return a + b
	}
	return a + "/" + b
}

// remotePath is run_chunked's _get_remote_path: a source named on the
// command line lands at dest (or dest/<name> when dest is a directory);
// a file found under a source directory keeps its path below that
// directory's name.
func remotePath(fn string, src []string, dest string, destIsDir bool) (string, bool) {
	for _, s := range src {
		if s == fn {
			if destIsDir {
				return pyJoin(dest, filepath.Base(fn)), true
			}
			return dest, true
		}
	}
	for _, s := range src {
		rel, err := filepath.Rel(s, fn)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		return pyJoin(pyJoin(dest, filepath.Base(s)), rel), true
	}
	return "", false
}

// destIsDir is run_chunked's test: several files, an empty directory,
// or a destination ending in a separator make dest a directory.
func destIsDir(files map[string]fs.FileMode, emptyDirs []string, dest string) bool {
	return len(emptyDirs) > 0 || len(files) > 1 || strings.HasSuffix(dest, "/") || strings.HasSuffix(dest, `\`)
}
