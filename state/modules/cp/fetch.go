package cp

import (
	"context"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/httpget"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
)

// isDirDest reports whether dest names a directory (existing, or
// written with a trailing slash), so the file keeps its own name.
func isDirDest(dest string) bool {
	if strings.HasSuffix(dest, "/") {
		return true
	}
	st, err := os.Stat(dest)
	return err == nil && st.IsDir()
}

// writeFile writes data to dest with the directory rules of
// fileclient.get_file: a missing parent is made only with makedirs.
func writeFile(dest string, data []byte, makedirs bool) (bool, error) {
	dir := filepath.Dir(dest)
	if _, err := os.Stat(dir); err != nil {
		if !makedirs {
			return false, nil
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, modules.Errorf("make %s: %w", dir, err)
		}
	}
	tmp, err := os.CreateTemp(dir, ".__salt.tmp.")
	if err != nil {
		return false, modules.Errorf("write %s: %w", dest, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, modules.Errorf("write %s: %w", dest, err)
	}
	if err := tmp.Close(); err != nil {
		return false, modules.Errorf("write %s: %w", dest, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return false, modules.Errorf("write %s: %w", dest, err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return false, modules.Errorf("write %s: %w", dest, err)
	}
	return true, nil
}

// getFile is fileclient.get_file for salt:// URLs: the path written,
// False when the file is absent or dest's directory is missing without
// makedirs. An empty dest caches the file.
func (c *client) getFile(ctx context.Context, url, dest string, makedirs bool, saltenv string) (any, error) {
	url, senv := splitEnv(url)
	if senv != "" {
		saltenv = senv
	}
	if !strings.HasPrefix(url, "salt://") {
		return nil, modules.Errorf("Unsupported path: %s", url)
	}
	data, ok, err := c.get(ctx, url, saltenv)
	if err != nil || !ok {
		return false, err
	}
	rel := strings.TrimPrefix(url, "salt://")
	if dest != "" && isDirDest(dest) {
		dest = filepath.Join(dest, path.Base(rel))
	}
	if dest == "" {
		dest, makedirs = c.cacheLoc(rel, saltenv), true
	}
	wrote, err := writeFile(dest, data, makedirs)
	if err != nil || !wrote {
		return false, err
	}
	return dest, nil
}

// extrnPath is fileclient._extrn_path: where a remote URL is cached.
func (c *client) extrnPath(u *url.URL, saltenv string) string {
	host := u.Host
	if i := strings.LastIndex(host, "@"); i >= 0 {
		host = host[i+1:]
	}
	if u.Port() != "" {
		host = strings.ReplaceAll(host, ":", "")
	}
	name := u.Path
	if u.RawQuery != "" {
		name += "-" + u.RawQuery
	}
	return filepath.Join(c.cachedir, "extrn_files", saltenv, host, filepath.Clean("/"+name))
}

// getURL is fileclient.get_url. dest nil returns the contents instead of
// writing them; "" caches the file.
func (c *client) getURL(ctx context.Context, raw string, dest any, makedirs bool, saltenv string) (any, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, modules.Errorf("parse %s: %w", raw, err)
	}
	d, toFile := dest.(string)
	if toFile && d != "" && isDirDest(d) {
		name := "index.html"
		if u.RawQuery != "" || (len(u.Path) > 1 && !strings.HasSuffix(u.Path, "/")) {
			name = raw[strings.LastIndex(raw, "/")+1:]
		}
		d = filepath.Join(d, name)
	}
	switch u.Scheme {
	case "", "file":
		p := path.Join(u.Host, u.Path)
		if u.Scheme == "" {
			p = raw
		}
		if !filepath.IsAbs(p) {
			return nil, modules.Errorf("Path '%s' is not absolute", p)
		}
		if !toFile {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, modules.Errorf("read %s: %w", p, err)
			}
			return string(b), nil
		}
		return p, nil
	case "salt":
		if !toFile {
			got, err := c.getFile(ctx, raw, "", true, saltenv)
			if err != nil || got == false {
				return got, err
			}
			b, err := os.ReadFile(got.(string))
			if err != nil {
				return nil, modules.Errorf("read %s: %w", got, err)
			}
			return string(b), nil
		}
		return c.getFile(ctx, raw, d, makedirs, saltenv)
	case "http", "https":
		return c.getHTTP(ctx, u, d, toFile, makedirs, saltenv)
	}
	return nil, modules.Errorf("Brine cannot fetch %s URLs: %s", u.Scheme, raw)
}

func (c *client) getHTTP(ctx context.Context, u *url.URL, dest string, toFile, makedirs bool, saltenv string) (any, error) {
	// httpget, not net/http: the thin binary stays 3 MB smaller.
	var hc httpget.Client
	resp, err := hc.Get(ctx, u.String())
	if err != nil {
		return nil, modules.Errorf("Error: %s reading %s", err.Error(), u.Redacted())
	}
	if resp.StatusCode >= 400 {
		// The reason phrase is the server's, as tornado's HTTPError
		// reports it (salt/fileclient.py get_url).
		return nil, modules.Errorf("Error: HTTP %d: %s reading %s", resp.StatusCode, resp.Status, u.Redacted())
	}
	body := resp.Body
	if !toFile {
		return string(body), nil
	}
	if dest == "" {
		dest, makedirs = c.extrnPath(u, saltenv), true
	}
	wrote, err := writeFile(dest, body, makedirs)
	if err != nil {
		return nil, err
	}
	if !wrote {
		return "", nil
	}
	return dest, nil
}

// hashFile is fileclient.hash_file: {hsum, hash_type} of a salt:// or
// local file, {} when it is absent.
func (c *client) hashFile(ctx context.Context, p, saltenv string) (any, error) {
	p, senv := splitEnv(p)
	if senv != "" {
		saltenv = senv
	}
	var data []byte
	if strings.HasPrefix(p, "salt://") {
		b, ok, err := c.get(ctx, p, saltenv)
		if err != nil {
			return nil, err
		}
		if !ok {
			return emptyMap(), nil
		}
		data = b
	} else {
		b, err := os.ReadFile(p)
		if err != nil {
			return emptyMap(), nil
		}
		data = b
	}
	sum, err := file.HashBytes(data, c.hashType)
	if err != nil {
		return nil, err
	}
	return mapOf("hsum", sum, "hash_type", c.hashType), nil
}

func parseURL(raw string) (*url.URL, error) { return url.Parse(raw) }
