package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
)

func zipFn(_ context.Context, c *modules.Call) (any, error) {
	if err := unsupported(c); err != nil {
		return nil, err
	}
	sources := expandSources(c.Arg("sources"))
	cwd := c.Str("cwd")
	if cwd == "" {
		for _, s := range sources {
			if !filepath.IsAbs(s) {
				return nil, modules.Invalidf("Relative paths require the 'cwd' parameter")
			}
		}
	} else if !filepath.IsAbs(cwd) {
		return nil, modules.Invalidf("cwd must be absolute")
	}
	archived, err := writeZip(c.Str("zip_file"), cwd, sources)
	if err != nil {
		return nil, modules.Errorf("Exception encountered creating zipfile: %w", err)
	}
	return anys(archived), nil
}

// writeZip archives sources (directories recursively) with names
// relative to cwd, or to / for absolute sources, as zip_ does.
func writeZip(zipFile, cwd string, sources []string) ([]string, error) {
	f, err := os.Create(zipFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	var archived []string
	for _, src := range sources {
		if cwd != "" {
			src = filepath.Join(cwd, src)
		}
		if _, err := os.Lstat(src); err != nil {
			continue
		}
		root := "/"
		if cwd != "" && strings.HasPrefix(src, cwd) {
			root = cwd
		}
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			if d.IsDir() {
				archived = append(archived, rel+"/")
			} else {
				archived = append(archived, rel)
			}
			return addFile(zw, p, rel, d)
		})
		if err != nil {
			return archived, err
		}
	}
	if err := zw.Close(); err != nil {
		return archived, err
	}
	return archived, f.Close()
}

func addFile(zw *zip.Writer, path, name string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	h, err := zip.FileInfoHeader(info)
	if err != nil {
		return err
	}
	h.Name = filepath.ToSlash(name)
	if d.IsDir() {
		h.Name += "/"
		h.Method = zip.Store
		_, err := zw.CreateHeader(h)
		return err
	}
	h.Method = zip.Deflate
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, target)
		return err
	}
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = io.Copy(w, in)
	return err
}

func excludeList(v any) map[string]bool {
	out := map[string]bool{}
	switch x := v.(type) {
	case nil:
	case string:
		for _, s := range strings.Split(x, ",") {
			out[strings.TrimSpace(s)] = true
		}
	case []any:
		for _, s := range x {
			out[ordered.KeyString(s)] = true
		}
	default:
		out[ordered.KeyString(x)] = true
	}
	return out
}

func unzipFn(_ context.Context, c *modules.Call) (any, error) {
	if err := unsupported(c); err != nil {
		return nil, err
	}
	if modules.Truthy(c.Arg("password")) {
		return nil, modules.Errorf("Exception encountered unpacking zipfile: encrypted archives are not supported")
	}
	names, err := extractZip(c.Str("zip_file"), c.Str("dest"), excludeList(c.Arg("excludes")), c.Arg("extract_perms") != false)
	if err != nil {
		return nil, modules.Errorf("Exception encountered unpacking zipfile: %w", err)
	}
	return trimFiles(names, c.Arg("trim_output")), nil
}

// inside joins name under dest, refusing names that escape it.
func inside(dest, name string) (string, error) {
	p := filepath.Join(dest, filepath.FromSlash(name))
	rel, err := filepath.Rel(dest, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", &fs.PathError{Op: "extract", Path: name, Err: fs.ErrPermission}
	}
	return p, nil
}

func extractZip(zipFile, dest string, excludes map[string]bool, perms bool) ([]string, error) {
	z, err := zip.OpenReader(zipFile)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	names := []string{}
	umask := currentUmask()
	for _, f := range z.File {
		if excludes[f.Name] {
			continue
		}
		names = append(names, f.Name)
		p, err := inside(dest, f.Name)
		if err != nil {
			return names, err
		}
		mode := f.ExternalAttrs >> 16
		if mode&sIFMT == sIFLNK {
			target, err := readMember(f)
			if err != nil {
				return names, err
			}
			if err := os.Symlink(string(target), p); err != nil {
				return names, err
			}
			continue
		}
		if err := extractMember(f, p); err != nil {
			return names, err
		}
		if !perms {
			continue
		}
		// os.chmod(path, external_attr >> 16) in Salt keeps setuid,
		// setgid and sticky bits (salt/modules/archive.py unzip).
		perm := file.PermBits(mode & 0o7777)
		if mode == 0 {
			perm = 0o666 &^ umask
			if strings.HasSuffix(f.Name, "/") {
				perm = 0o777 &^ umask
			}
		}
		if err := os.Chmod(p, perm); err != nil {
			return names, err
		}
	}
	return names, nil
}

func readMember(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var b bytes.Buffer
	_, err = io.Copy(&b, rc)
	return b.Bytes(), err
}

func extractMember(f *zip.File, p string) error {
	if strings.HasSuffix(f.Name, "/") {
		return os.MkdirAll(p, 0o777)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, rc); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// currentUmask reads the umask from /proc/self/status; setting it to
// read it back would race with other goroutines creating files.
func currentUmask() fs.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Umask:"); ok {
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return fs.FileMode(n)
				}
			}
		}
	}
	return 0o022
}

// trimFiles is _trim_files: past the limit (100, or an int
// trim_output), the list is cut and a note appended.
func trimFiles(files []string, trim any) []any {
	count := 100
	if n, ok := trim.(int); ok {
		count = n
	}
	if trim != false && trim != nil && len(files) > count {
		files = append(files[:count:count], "List trimmed after "+ordered.KeyString(count)+" files.")
	}
	return anys(files)
}

func isEncrypted(ctx context.Context, c *modules.Call) (any, error) {
	r, err := source(ctx, c, c.Str("name"))
	if err != nil {
		return nil, err
	}
	z, err := zip.NewReader(r, r.Size())
	if err != nil {
		return nil, modules.Errorf("%s is not a ZIP file", c.Str("name"))
	}
	for _, f := range z.File {
		if f.Flags&0x1 != 0 {
			return true, nil
		}
	}
	return false, nil
}
