package pki

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// racyWindow is how old a directory's mtime must be, when it is listed,
// for the listing to be kept: two changes within one timestamp tick of
// the file system leave the same mtime, so a listing taken in the tick
// of its directory's last change may miss the second and is not kept.
// It also absorbs clock skew with a file server.
const racyWindow = time.Second

// dirIndex keeps the listings of the key directories so that listing
// thousands of keys (on every publish, for targeting) does not read the
// directory each time. A listing is used only while the directory is the
// same one with the same mtime, which every create, delete and rename in
// it changes, whether done by this master or by salt-key in another
// process; so salt-key sees the master's changes and the master sees
// salt-key's at their next listing, as Salt reading the directories does.
type dirIndex struct {
	mu   sync.Mutex
	dirs map[string]dirListing
}

type dirListing struct {
	st    fs.FileInfo
	names []string
}

// list returns the listing of dir (see listDir), a fresh slice each time.
func (x *dirIndex) list(dir string) ([]string, bool) {
	st, err := os.Stat(dir)
	if err != nil {
		x.forget(dir)
		return nil, false
	}
	x.mu.Lock()
	l, ok := x.dirs[dir]
	x.mu.Unlock()
	if ok && os.SameFile(l.st, st) && l.st.ModTime().Equal(st.ModTime()) {
		return slices.Clone(l.names), true
	}
	start := time.Now()
	names, keep, ok := scanDir(dir)
	if !ok {
		x.forget(dir)
		return nil, false
	}
	after, err := os.Stat(dir)
	keep = keep && err == nil && os.SameFile(st, after) && st.ModTime().Equal(after.ModTime()) &&
		start.Sub(st.ModTime()) > racyWindow
	if keep {
		x.mu.Lock()
		if x.dirs == nil {
			x.dirs = map[string]dirListing{}
		}
		x.dirs[dir] = dirListing{st: st, names: slices.Clone(names)}
		x.mu.Unlock()
	} else {
		x.forget(dir)
	}
	return names, true
}

func (x *dirIndex) forget(dir string) {
	x.mu.Lock()
	delete(x.dirs, dir)
	x.mu.Unlock()
}

// scanDir reads dir: the regular files not starting with ".", following
// symlinks as Salt's os.path.isfile does, sorted ignoring case. keep is
// false when a symlink was followed, since its target can change without
// the directory changing.
func scanDir(dir string) (names []string, keep, ok bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, false
	}
	keep = true
	names = []string{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		switch t := e.Type(); {
		case t.IsRegular():
			names = append(names, e.Name())
		case t.IsDir():
		default: // a symlink, or a file system that does not report types
			keep = false
			if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && st.Mode().IsRegular() {
				names = append(names, e.Name())
			}
		}
	}
	return sortedIgnoreCase(names), keep, true
}
