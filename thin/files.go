package thin

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/thin/frame"
)

// fileClient serves salt:// URLs to execution functions on the target.
// Files shipped with the job come first: job.Data["files"] maps saltenv
// to path to content, the content being a string or {"base64": "…"} for
// binary files. Then, for masterless use, the file_roots option
// ({saltenv: [dir, …]}) is searched, as fileclient: local does.
type fileClient struct {
	shipped *ordered.Map
	roots   *ordered.Map
	// cache is <thin_dir>/files, where salt-ssh puts large files once,
	// named by their sha256; a shipped entry {"sha256": …} points there.
	cache string
}

func newFileClient(job *frame.Job, opts *ordered.Map) modules.FileClient {
	shipped, _ := job.Data.Value("files").(*ordered.Map)
	roots, _ := opts.Value("file_roots").(*ordered.Map)
	c := &fileClient{shipped: shipped, roots: roots}
	if d, ok := opts.Value("thin_dir").(string); ok && d != "" {
		c.cache = filepath.Join(d, "files")
	}
	return c
}

// Get implements modules.FileClient.
func (c *fileClient) Get(_ context.Context, url, saltenv string) ([]byte, error) {
	rel, env := parseSaltURL(url)
	if env == "" {
		env = saltenv
	}
	if env == "" {
		env = "base"
	}
	if rel == "" || strings.HasPrefix(path.Clean("/"+rel), "/..") {
		return nil, fmt.Errorf("get %s: %w", url, fs.ErrNotExist)
	}
	rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
	if files, ok := c.shipped.Value(env).(*ordered.Map); ok {
		if v, ok := files.Get(rel); ok {
			return c.decodeShipped(v)
		}
	}
	dirs, _ := c.roots.Value(env).([]any)
	for _, d := range dirs {
		dir, _ := d.(string)
		if dir == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("get %s in saltenv %s: %w", url, env, fs.ErrNotExist)
}

func (c *fileClient) decodeShipped(v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return []byte(x), nil
	case *ordered.Map:
		if sum, ok := x.Value("sha256").(string); ok {
			return c.cached(sum)
		}
		s, _ := x.Value("base64").(string)
		return base64.StdEncoding.DecodeString(s)
	}
	return nil, fmt.Errorf("shipped file has type %T", v)
}

// parseSaltURL splits salt://path?saltenv=env into path and env.
func parseSaltURL(url string) (rel, env string) {
	rel = strings.TrimPrefix(url, "salt://")
	if p, q, ok := strings.Cut(rel, "?"); ok {
		rel = p
		for _, kv := range strings.Split(q, "&") {
			if v, ok := strings.CutPrefix(kv, "saltenv="); ok {
				env = v
			}
		}
	}
	return rel, env
}

// cached reads a file salt-ssh placed in the thin_dir's content cache and
// checks it is the one the job names.
func (c *fileClient) cached(sum string) ([]byte, error) {
	if c.cache == "" || len(sum) != 64 || strings.ContainsAny(sum, "/.") {
		return nil, fmt.Errorf("cached file %q: %w", sum, fs.ErrNotExist)
	}
	b, err := os.ReadFile(filepath.Join(c.cache, sum))
	if err != nil {
		return nil, err
	}
	if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
		return nil, fmt.Errorf("cached file %s: checksum mismatch", sum)
	}
	return b, nil
}

// FileList lists saltenv's files, as file.recurse needs (Salt's
// cp.list_master): those shipped with the job (salt-ssh sends every file
// under the directories a state recurses), then those under the
// file_roots, sorted and each once.
func (c *fileClient) FileList(saltenv string) []string {
	seen := map[string]bool{}
	if files, ok := c.shipped.Value(saltenv).(*ordered.Map); ok {
		files.Range(func(k, _ any) bool { seen[ordered.KeyString(k)] = true; return true })
	}
	dirs, _ := c.roots.Value(saltenv).([]any)
	for _, d := range dirs {
		dir, _ := d.(string)
		if dir == "" {
			continue
		}
		filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				if rel, rerr := filepath.Rel(dir, p); rerr == nil {
					seen[filepath.ToSlash(rel)] = true
				}
			}
			return nil
		})
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}
