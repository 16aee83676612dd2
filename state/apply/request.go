package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// State requests (salt/modules/state.py request, check_request,
// clear_request, run_request): a test run is recorded under a name in
// <cachedir>/req_state.p for the local admin to run later. Salt writes
// the file with msgpack; Brine writes JSON (the file is private to the
// minion, mode 0600, replaced atomically).

func requestPath(env *modules.Env) string { return filepath.Join(cachedir(env), "req_state.p") }

// loadRequests is check_request without a name: {} when there is no file.
func loadRequests(env *modules.Env) (*ordered.Map, error) {
	b, err := os.ReadFile(requestPath(env))
	if errors.Is(err, fs.ErrNotExist) {
		return ordered.New(), nil
	}
	if err != nil {
		return nil, modules.Errorf("read state request file: %w", err)
	}
	v, err := ordered.DecodeJSON(bytes.NewReader(b))
	if err != nil {
		return nil, modules.Errorf("read state request file %s: %w", requestPath(env), err)
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, modules.Errorf("state request file %s does not hold a mapping", requestPath(env))
	}
	return m, nil
}

// saveRequests writes the requests beside the old file and renames it
// into place, so a reader never sees half of it.
func saveRequests(env *modules.Env, req *ordered.Map) error {
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode state requests: %w", err)
	}
	path := requestPath(env)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write state request file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".req_state.p.*")
	if err != nil {
		return fmt.Errorf("write state request file: %w", err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write state request file: %w", err)
	}
	return nil
}

// request is state.request: a test=True state.apply whose return is
// stored, with mods and the keyword arguments, under name (default
// "default").
func (m *module) request(ctx context.Context, c *modules.Call) (any, error) {
	kw := c.Kwargs.Copy()
	kw.Set("test", true)
	mods := c.Arg("mods")
	ret, err := m.applyWith(ctx, c.Env, mods, kw)
	if err != nil {
		return nil, err
	}
	req, err := loadRequests(c.Env)
	if err != nil {
		return nil, err
	}
	name := "default"
	if s, ok := kw.Value("name").(string); ok {
		name = s
	}
	req.Set(name, ordered.FromPairs("test_run", ret, "mods", mods, "kwargs", publicKwargs(kw)))
	if err := saveRequests(c.Env, req); err != nil {
		// Salt logs the failure and still returns the test run.
		c.Env.Log.Error("Unable to write state request file. Check permission.", "path", requestPath(c.Env), logattr.Err, err)
	}
	return ret, nil
}

// publicKwargs drops the __pub_* publish data from the kwargs a request
// keeps, which run_request passes back to state.apply.
func publicKwargs(kw *ordered.Map) *ordered.Map {
	out := ordered.New()
	kw.Range(func(k, v any) bool {
		if s := ordered.KeyString(k); len(s) < 2 || s[:2] != "__" {
			out.Set(k, v)
		}
		return true
	})
	return out
}

// checkRequest is state.check_request: every request, or the one named
// (an error when there is none of that name, Salt's KeyError).
func (m *module) checkRequest(_ context.Context, c *modules.Call) (any, error) {
	req, err := loadRequests(c.Env)
	if err != nil {
		return nil, err
	}
	name := c.Str("name")
	if name == "" {
		return req, nil
	}
	if req.Len() == 0 {
		return req, nil
	}
	v, ok := req.Get(name)
	if !ok {
		return nil, modules.Errorf("no state request named '%s'", name)
	}
	return v, nil
}

// clearRequest is state.clear_request: drop every request, or the one
// named (False when there is none of that name).
func (m *module) clearRequest(_ context.Context, c *modules.Call) (any, error) {
	path := requestPath(c.Env)
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return true, nil
	}
	name := c.Str("name")
	if name == "" {
		_ = os.Remove(path)
		return true, nil
	}
	req, err := loadRequests(c.Env)
	if err != nil {
		return nil, err
	}
	if !req.Has(name) {
		return false, nil
	}
	req.Delete(name)
	if err := saveRequests(c.Env, req); err != nil {
		c.Env.Log.Error("Unable to write state request file. Check permission.", "path", path, logattr.Err, err)
	}
	return true, nil
}

// runRequest is state.run_request: run the named request for real (its
// keyword arguments updated with the ones given, test dropped), then
// remove the request file; {} when there is no such request.
func (m *module) runRequest(ctx context.Context, c *modules.Call) (any, error) {
	req, err := loadRequests(c.Env)
	if err != nil {
		return nil, err
	}
	nreq, ok := req.Value(c.Str("name")).(*ordered.Map)
	if !ok || !nreq.Has("mods") || !nreq.Has("kwargs") {
		return ordered.New(), nil
	}
	kw, _ := nreq.Value("kwargs").(*ordered.Map)
	if kw == nil {
		kw = ordered.New()
	}
	publicKwargs(c.Kwargs).Range(func(k, v any) bool { kw.Set(k, v); return true })
	kw.Delete("test")
	ret, err := m.applyWith(ctx, c.Env, nreq.Value("mods"), kw)
	if err != nil {
		return nil, err
	}
	_ = os.Remove(requestPath(c.Env))
	return ret, nil
}
