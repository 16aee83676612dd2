// Package fileclient holds Salt's file clients (salt/fileclient.py):
// Client is the masterless FSClient (file_client: local), salt:// URLs
// and SLS names resolved against file_roots, per saltenv, first root
// wins; RemoteClient fetches from the master's file server through a
// Remote the caller supplies, with hash-checked caching.
package fileclient

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Client reads from local file_roots. It implements modules.FileClient
// and compile.Source.
type Client struct {
	envs  []string
	roots map[string][]string
}

// New returns a client over roots (saltenv → directories). "base" is
// listed first, then the other saltenvs in the given order.
func New(roots map[string][]string, order []string) *Client {
	c := &Client{roots: roots}
	seen := map[string]bool{}
	for _, e := range append([]string{"base"}, order...) {
		if _, ok := roots[e]; ok && !seen[e] {
			seen[e] = true
			c.envs = append(c.envs, e)
		}
	}
	var rest []string
	for e := range roots {
		if !seen[e] {
			rest = append(rest, e)
		}
	}
	sort.Strings(rest)
	c.envs = append(c.envs, rest...)
	return c
}

// Envs lists the saltenvs, base first.
func (c *Client) Envs() []string { return append([]string(nil), c.envs...) }

// clean rejects paths that climb out of the root.
func clean(rel string) (string, bool) {
	p := path.Clean("/" + strings.TrimPrefix(rel, "/"))
	if p == "/" {
		return "", false
	}
	return p[1:], true
}

// find returns the first root path holding rel in saltenv.
func (c *Client) find(rel, saltenv string) (string, bool) {
	rel, ok := clean(rel)
	if !ok {
		return "", false
	}
	for _, root := range c.roots[saltenv] {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, true
		}
	}
	return "", false
}

// ReadFile reads rel from saltenv; ok is false when no root has it.
func (c *Client) ReadFile(_ context.Context, rel, saltenv string) ([]byte, bool, error) {
	p, ok := c.find(rel, saltenv)
	if !ok {
		return nil, false, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	return b, true, nil
}

// Get reads a salt:// URL (with an optional ?saltenv=) from saltenv.
func (c *Client) Get(ctx context.Context, url, saltenv string) ([]byte, error) {
	return get(ctx, c.ReadFile, url, saltenv)
}

// get reads a salt:// URL through read, failing with fs.ErrNotExist
// when it is absent.
func get(ctx context.Context, read readFunc, url, saltenv string) ([]byte, error) {
	rel, env := ParseURL(url)
	if env != "" {
		saltenv = env
	}
	b, ok, err := read(ctx, rel, saltenv)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("get %s in saltenv %s: %w", url, saltenv, fs.ErrNotExist)
	}
	return b, nil
}

// LocalPath returns the path on disk of a salt:// URL, or "" when absent.
func (c *Client) LocalPath(url, saltenv string) string {
	rel, env := ParseURL(url)
	if env != "" {
		saltenv = env
	}
	p, _ := c.find(rel, saltenv)
	return p
}

// ParseURL splits salt://path?saltenv=env into path and env.
func ParseURL(url string) (rel, saltenv string) {
	rel = strings.TrimPrefix(url, "salt://")
	if i := strings.Index(rel, "?"); i >= 0 {
		q := rel[i+1:]
		rel = rel[:i]
		for _, kv := range strings.Split(q, "&") {
			if v, ok := strings.CutPrefix(kv, "saltenv="); ok {
				saltenv = v
			}
		}
	}
	return rel, saltenv
}

// FileList lists every file of saltenv as slash paths relative to the
// roots, sorted (file_list).
func (c *Client) FileList(saltenv string) []string {
	set := map[string]bool{}
	for _, root := range c.roots[saltenv] {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrPermission) {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err == nil {
				set[filepath.ToSlash(rel)] = true
			}
			return nil
		})
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ListStates lists the SLS names of saltenv (list_states): a/b.sls is
// "a.b" and a/init.sls is "a".
func (c *Client) ListStates(saltenv string) []string { return listStates(c.FileList(saltenv)) }

// listStates turns a file listing into SLS names.
func listStates(files []string) []string {
	set := map[string]bool{}
	for _, p := range files {
		if !strings.HasSuffix(p, ".sls") {
			continue
		}
		if strings.HasSuffix(p, "/init.sls") {
			set[strings.ReplaceAll(p, "/", ".")[:len(p)-9]] = true
		} else {
			set[strings.ReplaceAll(p, "/", ".")[:len(p)-4]] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// FindSLS resolves an SLS name to sls.sls or sls/init.sls (get_state);
// dots in the name are directory separators.
func (c *Client) FindSLS(ctx context.Context, sls, saltenv string) (string, []byte, bool, error) {
	return findSLS(ctx, c.ReadFile, sls, saltenv)
}

type readFunc func(ctx context.Context, rel, saltenv string) ([]byte, bool, error)

func findSLS(ctx context.Context, read readFunc, sls, saltenv string) (string, []byte, bool, error) {
	base := strings.ReplaceAll(sls, ".", "/")
	for _, rel := range []string{base + ".sls", base + "/init.sls"} {
		b, ok, err := read(ctx, rel, saltenv)
		if err != nil {
			return "", nil, false, err
		}
		if ok {
			return rel, b, true, nil
		}
	}
	return "", nil, false, nil
}
