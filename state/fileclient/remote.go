package fileclient

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/brinesalt/brine/internal/crypt"
)

// Remote is the master's file server as the minion reaches it: one call
// per fileserver command of Salt's RemoteClient (salt/fileclient.py).
// minion/ implements it over the encrypted request channel; this
// package holds no network code.
type Remote interface {
	// FileHash is _file_hash: the server's digest of rel in saltenv and
	// its hash type; sum is "" when the file is absent.
	FileHash(ctx context.Context, rel, saltenv string) (sum, hashType string, err error)
	// ServeFile is _serve_file: the chunk of rel starting at loc. Empty
	// data ends the file; found is false when the server has no such
	// file.
	ServeFile(ctx context.Context, rel, saltenv string, loc int) (data []byte, found bool, err error)
	// FileList is _file_list: the files of saltenv under prefix.
	FileList(ctx context.Context, saltenv, prefix string) ([]string, error)
	// Envs is _file_envs: the server's saltenvs.
	Envs(ctx context.Context) ([]string, error)
}

// RemoteClient is Salt's RemoteClient: salt:// files come from the
// master and are cached under <cachedir>/files/<saltenv>/<path>. Before
// using a cached copy it asks the master for the file's hash and
// transfers the file again only when the hashes differ (get_file with
// its hash_local/hash_server check). It implements modules.FileClient,
// compile.Source and the cp module's Lister.
type RemoteClient struct {
	// ctx bounds the listing calls whose interfaces (compile.Source,
	// cp.Lister) carry no context: it is the job's context.
	ctx      context.Context
	remote   Remote
	cachedir string
	// transfers counts files fetched from the master (not served from
	// the cache).
	transfers atomic.Int64
}

// NewRemote returns a client over remote caching in cachedir. ctx is
// the context of the job the client serves.
func NewRemote(ctx context.Context, remote Remote, cachedir string) *RemoteClient {
	return &RemoteClient{ctx: ctx, remote: remote, cachedir: cachedir}
}

// Transfers is the number of files this client fetched from the master.
func (c *RemoteClient) Transfers() int64 { return c.transfers.Load() }

// cachePath is where rel of saltenv is cached; ok is false for paths
// that climb out of the cache.
func (c *RemoteClient) cachePath(rel, saltenv string) (string, bool) {
	rel, ok := clean(rel)
	if !ok || saltenv == "" || strings.ContainsAny(saltenv, `/\`) || saltenv == "." || saltenv == ".." {
		return "", false
	}
	return filepath.Join(c.cachedir, "files", saltenv, filepath.FromSlash(rel)), true
}

// ReadFile returns rel of saltenv, from the cache when the master's hash
// matches the cached copy, else fetched from the master and cached.
func (c *RemoteClient) ReadFile(ctx context.Context, rel, saltenv string) ([]byte, bool, error) {
	dest, ok := c.cachePath(rel, saltenv)
	if !ok {
		return nil, false, nil
	}
	rel, _ = clean(rel)
	sum, hashType, err := c.remote.FileHash(ctx, rel, saltenv)
	if err != nil {
		return nil, false, fmt.Errorf("hash salt://%s in saltenv %s: %w", rel, saltenv, err)
	}
	if sum == "" {
		return nil, false, nil
	}
	if b, err := os.ReadFile(dest); err == nil {
		if got, err := digest(b, hashType); err == nil && got == sum {
			return b, true, nil
		}
	}
	b, found, err := c.fetch(ctx, rel, saltenv)
	if err != nil || !found {
		return nil, false, err
	}
	if got, err := digest(b, hashType); err != nil || got != sum {
		// The file changed on the master during the transfer, or the
		// transfer was corrupted: never cache or use it.
		return nil, false, fmt.Errorf("fetch salt://%s in saltenv %s: hash mismatch", rel, saltenv)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return nil, false, fmt.Errorf("cache salt://%s: %w", rel, err)
	}
	// Written through a renamed temporary file: a reader never sees
	// half a file.
	if err := crypt.WriteFileReplace(dest, b, 0o600); err != nil {
		return nil, false, fmt.Errorf("cache salt://%s: %w", rel, err)
	}
	return b, true, nil
}

// fetch transfers rel chunk by chunk until the master sends empty data.
func (c *RemoteClient) fetch(ctx context.Context, rel, saltenv string) ([]byte, bool, error) {
	var buf []byte
	for {
		data, found, err := c.remote.ServeFile(ctx, rel, saltenv, len(buf))
		if err != nil {
			return nil, false, fmt.Errorf("fetch salt://%s in saltenv %s: %w", rel, saltenv, err)
		}
		if !found {
			return nil, false, nil
		}
		if len(data) == 0 {
			c.transfers.Add(1)
			return buf, true, nil
		}
		buf = append(buf, data...)
	}
}

// digest hashes b with one of the hash_type values Salt's file server
// uses.
func digest(b []byte, hashType string) (string, error) {
	if hashType == "" {
		hashType = crypt.DefaultHashType
	}
	h, err := crypt.NewHash(hashType)
	if err != nil {
		return "", err
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Get reads a salt:// URL (with an optional ?saltenv=) from saltenv.
func (c *RemoteClient) Get(ctx context.Context, url, saltenv string) ([]byte, error) {
	if saltenv == "" {
		saltenv = "base"
	}
	return get(ctx, c.ReadFile, url, saltenv)
}

// LocalPath returns the cached copy of a salt:// URL, or "" when it is
// not cached (Salt renders templates from the cached path).
func (c *RemoteClient) LocalPath(url, saltenv string) string {
	rel, env := ParseURL(url)
	if env != "" {
		saltenv = env
	}
	p, ok := c.cachePath(rel, saltenv)
	if !ok {
		return ""
	}
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// FindSLS resolves an SLS name to sls.sls or sls/init.sls on the master.
func (c *RemoteClient) FindSLS(ctx context.Context, sls, saltenv string) (string, []byte, bool, error) {
	return findSLS(ctx, c.ReadFile, sls, saltenv)
}

// Envs lists the master's saltenvs; none when the master cannot be
// asked.
func (c *RemoteClient) Envs() []string {
	envs, err := c.remote.Envs(c.ctx)
	if err != nil {
		return nil
	}
	return envs
}

// FileList lists the master's files of saltenv.
func (c *RemoteClient) FileList(saltenv string) []string {
	l, err := c.remote.FileList(c.ctx, saltenv, "")
	if err != nil {
		return nil
	}
	return l
}

// ListStates lists the SLS names of saltenv on the master.
func (c *RemoteClient) ListStates(saltenv string) []string {
	return listStates(c.FileList(saltenv))
}
