// Package cp is Salt's cp execution module (salt/modules/cp.py with the
// caching rules of salt/fileclient.py): copying files and directories
// from the file server (salt://) onto the host, fetching URLs, rendering
// templates, caching files under <cachedir>/files/<saltenv>/ and listing
// what the file server holds.
//
// Files are read through Env.Files. Listings need more than Get: when
// Env.Files implements Lister (state/fileclient.Client does) it answers
// them; otherwise a local file client over the file_roots option does,
// as Salt's masterless FSClient would.
//
// Differences from Salt: get_url fetches salt://, file:// and http(s)
// URLs only (no ftp, s3 or swift); gzip= is accepted and ignored (there
// is no transfer to compress); path templates (template= on get_file and
// get_dir) render with jinja only; push is not supported;
// list_master_symlinks is always {}.
package cp

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/modules"
)

// Lister is the listing side of a file client, which the
// modules.FileClient interface lacks. state/fileclient.Client
// implements it.
type Lister interface {
	// FileList lists the files of saltenv as slash paths relative to the
	// file roots, sorted.
	FileList(saltenv string) []string
	// Envs lists the saltenvs, base first.
	Envs() []string
}

// DefaultCachedir is the minion's cachedir default on Linux.
const DefaultCachedir = modules.DefaultCachedir

// client is one call's view of the file server and the minion cache.
type client struct {
	env      *modules.Env
	cachedir string
	hashType string
}

func newClient(env *modules.Env) *client {
	c := &client{env: env, cachedir: DefaultCachedir, hashType: "sha256"}
	if s, _ := env.Opts.Value("cachedir").(string); s != "" {
		c.cachedir = s
	}
	if s, _ := env.Opts.Value("hash_type").(string); s != "" {
		c.hashType = s
	}
	return c
}

// saltenv is the call's saltenv argument, else the saltenv option,
// else base.
func saltenv(c *modules.Call) string {
	if s := c.Str("saltenv"); s != "" {
		return s
	}
	if s, _ := c.Env.Opts.Value("saltenv").(string); s != "" {
		return s
	}
	return "base"
}

// lister returns Env.Files when it can list, else a local client over
// the file_roots option.
func (c *client) lister() Lister {
	if l, ok := c.env.Files.(Lister); ok {
		return l
	}
	return RootsClient(c.env.Opts)
}

// RootsClient builds a file client over the file_roots option
// ({saltenv: [dir, …]}).
func RootsClient(opts *ordered.Map) *fileclient.Client {
	roots := map[string][]string{}
	var order []string
	if m, ok := opts.Value("file_roots").(*ordered.Map); ok {
		m.Range(func(k, v any) bool {
			env := ordered.KeyString(k)
			order = append(order, env)
			list, _ := v.([]any)
			for _, d := range list {
				if s, ok := d.(string); ok {
					roots[env] = append(roots[env], s)
				}
			}
			return true
		})
	}
	return fileclient.New(roots, order)
}

// fileList is the file server's listing of saltenv under prefix.
func (c *client) fileList(saltenv, prefix string) []string {
	var out []string
	for _, f := range c.lister().FileList(saltenv) {
		if strings.HasPrefix(f, prefix) {
			out = append(out, f)
		}
	}
	return out
}

// dirList derives the directories holding files, as the roots backend
// lists them (without the root itself).
func (c *client) dirList(saltenv, prefix string) []string {
	set := map[string]bool{}
	for _, f := range c.lister().FileList(saltenv) {
		for d := path.Dir(f); d != "." && d != "/"; d = path.Dir(d) {
			set[d] = true
		}
	}
	var out []string
	for d := range set {
		if strings.HasPrefix(d, prefix) {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// splitEnv is salt.utils.url.split_env: the URL without ?saltenv= and
// that saltenv.
func splitEnv(url string) (string, string) {
	if !strings.HasPrefix(url, "salt://") {
		return url, ""
	}
	rel, env := fileclient.ParseURL(url)
	return "salt://" + rel, env
}

// cacheLoc is where a salt:// file is cached: <cachedir>/files/<saltenv>/<path>.
func (c *client) cacheLoc(rel, saltenv string) string {
	return filepath.Join(c.cachedir, "files", saltenv, filepath.FromSlash(strings.TrimLeft(rel, "|/")))
}

func (c *client) get(ctx context.Context, url, saltenv string) ([]byte, bool, error) {
	if c.env.Files == nil {
		return nil, false, nil
	}
	b, err := c.env.Files.Get(ctx, url, saltenv)
	if err != nil {
		if isNotExist(err) {
			return nil, false, nil
		}
		return nil, false, modules.Errorf("get %s: %w", url, err)
	}
	return b, true, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
