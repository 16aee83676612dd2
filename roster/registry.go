package roster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Roster selects targets from a loaded inventory.
type Roster interface {
	// Targets returns the targets matching tgt under tgtType (Salt's
	// tgt_type: glob, pcre, list, nodegroup), in roster order, fully
	// resolved. No match is an empty result, not an error.
	Targets(ctx context.Context, tgt, tgtType string) ([]Target, error)
}

// OpenFunc loads one backend's roster.
type OpenFunc func(ctx context.Context, cfg Config) (Roster, error)

// Registry maps backend names (Salt's --roster values) to loaders.
type Registry struct {
	mu       sync.RWMutex
	backends map[string]OpenFunc
}

// NewRegistry returns an empty registry; tests use their own instead of
// the global one.
func NewRegistry() *Registry { return &Registry{backends: map[string]OpenFunc{}} }

// Register adds a backend; it panics on an empty name or a duplicate,
// which are programmer errors.
func (r *Registry) Register(name string, open OpenFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" || open == nil {
		panic("roster: Register with empty name or nil OpenFunc")
	}
	if _, dup := r.backends[name]; dup {
		panic(fmt.Sprintf("roster: backend %q registered twice", name))
	}
	r.backends[name] = open
}

// Names lists the registered backends, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.backends))
	for n := range r.backends {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Open loads the backends named in names, comma separated as
// `--roster flat,cache` (default "flat"), and returns one Roster over all
// of them. Targets from later backends replace same-ID targets from
// earlier ones (salt/roster/__init__.py Roster.targets dict.update, where
// the order is that of a Python set; Brine's is the command line's). A
// target that matches nothing falls back to an ad-hoc `[user@]host`
// target as salt-ssh does (see AdHoc).
//
// In Salt, roster_file is the file of every file-based backend (flat and
// ansible both call get_roster_file), so `--roster flat,ansible` reads one
// file twice. Brine keeps that and adds a per-backend file: a name
// written `backend=path` (`--roster flat,ansible=/etc/ansible/hosts`)
// reads path, whatever roster_file says.
func (r *Registry) Open(ctx context.Context, names string, cfg Config) (Roster, error) {
	if strings.TrimSpace(names) == "" {
		names = "flat"
	}
	var rs []Roster
	adhoc := cfg // --update-roster appends to the flat backend's file
	hasFlat := false
	for _, spec := range strings.Split(names, ",") {
		name, file, hasFile := strings.Cut(strings.TrimSpace(spec), "=")
		name = strings.TrimSpace(name)
		r.mu.RLock()
		open, ok := r.backends[name]
		r.mu.RUnlock()
		if !ok {
			return nil, fmt.Errorf("open roster %q: %w", name, ErrUnknownBackend)
		}
		hasFlat = hasFlat || name == "flat"
		bcfg := cfg
		if hasFile {
			bcfg.File = strings.TrimSpace(file)
			if name == "flat" {
				adhoc.File = bcfg.File
			}
		}
		ro, err := open(ctx, bcfg)
		if err != nil {
			return nil, fmt.Errorf("open roster %q: %w", name, err)
		}
		rs = append(rs, ro)
	}
	if adhoc.UpdateRoster && !hasFlat {
		// Salt appends to roster_file whatever the backend; appending YAML
		// to an Ansible inventory would break it.
		cfg.logger().Warn("--update-roster needs the flat roster; not updating")
		adhoc.UpdateRoster = false
	}
	return &AdHoc{Roster: merged(rs), Config: adhoc}, nil
}

var global = NewRegistry()

// Register adds a backend to the global registry (from init()).
func Register(name string, open OpenFunc) { global.Register(name, open) }

// Open opens backends from the global registry; see Registry.Open.
func Open(ctx context.Context, names string, cfg Config) (Roster, error) {
	return global.Open(ctx, names, cfg)
}

// Backends lists the globally registered backend names.
func Backends() []string { return global.Names() }

type multi []Roster

func merged(rs []Roster) Roster {
	if len(rs) == 1 {
		return rs[0]
	}
	return multi(rs)
}

// Targets merges the backends' results by ID, keeping first-seen order.
func (m multi) Targets(ctx context.Context, tgt, tgtType string) ([]Target, error) {
	var out []Target
	idx := map[string]int{}
	for _, r := range m {
		ts, err := r.Targets(ctx, tgt, tgtType)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if i, ok := idx[t.ID]; ok {
				out[i] = t
				continue
			}
			idx[t.ID] = len(out)
			out = append(out, t)
		}
	}
	return out, nil
}
