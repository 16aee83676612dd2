package promote

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFile makes path hold data with mode, reporting whether it had to
// change anything. A new content goes to a temporary file in the same
// directory (created 0600, so a secret is never readable by others even
// for a moment), synced, then renamed over path: a reader sees the old
// file or the new one, never half of it.
func writeFile(path string, data []byte, mode fs.FileMode) (bool, error) {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return fixMode(path, mode)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return true, replace(path, bytes.NewReader(data), mode)
}

// copyFile makes dst a copy of src with mode, unless it already is one.
func copyFile(src, dst string, mode fs.FileMode) (bool, error) {
	a, err := sum(src)
	if err != nil {
		return false, err
	}
	if b, err := sum(dst); err == nil && bytes.Equal(a, b) {
		return fixMode(dst, mode)
	}
	f, err := os.Open(src)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", src, err)
	}
	defer f.Close()
	return true, replace(dst, f, mode)
}

func sum(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return h.Sum(nil), nil
}

func fixMode(path string, mode fs.FileMode) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode().Perm() == mode {
		return false, nil
	}
	if err := os.Chmod(path, mode); err != nil {
		return false, fmt.Errorf("chmod %s: %w", path, err)
	}
	return true, nil
}

func replace(path string, r io.Reader, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	// Directories on the way to a private key stay private.
	dirMode := fs.FileMode(0o755)
	if mode&0o077 == 0 {
		dirMode = 0o700
	}
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, r); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done = true
	return nil
}
