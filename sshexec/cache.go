package sshexec

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// GrainsCache keeps each agentless host's grains on the controller, as
// Salt keeps <cachedir>/minions/<id>/ssh_data.p, so that grain, pillar
// and compound targeting and the controller-side rendering of states and
// pillar know what every host is without asking it first. Salt's own
// salt-ssh only targets by id; Brine fills the cache from every thin
// result that is older than Life, at no extra round trip.
type GrainsCache struct {
	Dir  string        // <cachedir>/minions
	Life time.Duration // cache_life; entries older than this are stale
	now  func() time.Time
}

// NewGrainsCache returns the cache under cachedir with Salt's cache_life.
func NewGrainsCache(cachedir string, life time.Duration) *GrainsCache {
	return &GrainsCache{Dir: filepath.Join(cachedir, "minions"), Life: life, now: time.Now}
}

const grainsFile = "ssh_grains.json"

func (c *GrainsCache) path(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, "/\x00") || id == "." || id == ".." {
		return "", fmt.Errorf("grains cache: unusable minion id %q", id)
	}
	return filepath.Join(c.Dir, id, grainsFile), nil
}

// Get returns the cached grains of id and whether they are still fresh.
// A missing or unreadable entry is (nil, false).
func (c *GrainsCache) Get(id string) (*ordered.Map, bool) {
	p, err := c.path(id)
	if err != nil {
		return nil, false
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	v, err := ordered.DecodeJSON(bytes.NewReader(data))
	m, ok := v.(*ordered.Map)
	if err != nil || !ok {
		return nil, false
	}
	return m, c.now().Sub(st.ModTime()) < c.Life
}

// Fresh reports whether id has an entry younger than Life, without
// reading it.
func (c *GrainsCache) Fresh(id string) bool {
	p, err := c.path(id)
	if err != nil {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && c.now().Sub(st.ModTime()) < c.Life
}

// Put stores the grains of id, atomically: a reader never sees half a file.
func (c *GrainsCache) Put(id string, grains *ordered.Map) error {
	p, err := c.path(id)
	if err != nil {
		return err
	}
	data, err := grains.MarshalJSON()
	if err != nil {
		return fmt.Errorf("grains cache: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("grains cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".grains-*")
	if err != nil {
		return fmt.Errorf("grains cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("grains cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("grains cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("grains cache: %w", err)
	}
	return nil
}

// Forget drops the entry of id (used by --refresh).
func (c *GrainsCache) Forget(id string) error {
	p, err := c.path(id)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("grains cache: %w", err)
	}
	return nil
}
