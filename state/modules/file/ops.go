package file

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// Touch is file.touch: create name if missing and set its times (now,
// or the given epoch atime/mtime; one given alone sets both).
func Touch(name string, atime, mtime any) error {
	name = expandUser(name)
	at, aok := epoch(atime)
	mt, mok := epoch(mtime)
	if aok && !mok {
		mt = at
	} else if mok && !aok {
		at = mt
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		if st, serr := os.Stat(name); serr == nil && st.IsDir() {
			return os.Chtimes(name, at, mt)
		}
		return modules.Errorf("%s", err.Error())
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chtimes(name, at, mt); err != nil {
		return modules.Errorf("%s", err.Error())
	}
	return nil
}

func epoch(v any) (time.Time, bool) {
	switch x := v.(type) {
	case int:
		return time.Unix(int64(x), 0), true
	case float64:
		return time.Unix(0, int64(x*1e9)), true
	case string:
		if n, err := strconv.ParseFloat(x, 64); err == nil {
			return time.Unix(0, int64(n*1e9)), true
		}
	}
	return time.Now(), false
}

// Symlink is file.symlink(src, path, force, atomic): create path → src.
// An existing path is replaced only with force (or atomic).
func Symlink(src, path string, force, atomic bool) error {
	path = expandUser(path)
	if !filepath.IsAbs(path) {
		return modules.Invalidf("File path must be absolute.")
	}
	if cur, err := os.Readlink(path); err == nil && filepath.Clean(cur) == filepath.Clean(src) {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		if !force && !atomic {
			return modules.Errorf("Found existing symlink: %s", path)
		}
		tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
		if err := os.Symlink(src, tmp); err != nil {
			return modules.Errorf("Could not create '%s'", path)
		}
		if err := os.Rename(tmp, path); err != nil {
			_ = os.Remove(tmp)
			if err := os.RemoveAll(path); err != nil {
				return modules.Errorf("Could not create '%s'", path)
			}
			return os.Symlink(src, path)
		}
		return nil
	}
	if err := os.Symlink(src, path); err != nil {
		return modules.Errorf("Could not create '%s'", path)
	}
	return nil
}

// strList turns a value into strings as Salt's *args would.
func strList(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = py.Str(e)
		}
		return out
	}
	return []string{py.Str(v)}
}
