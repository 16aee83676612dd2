// Package beacons is Salt's beacon system (salt/beacons/__init__.py and
// the beacon modules in salt/beacons/): the `beacons:` of the minion
// configuration and of the pillar, in Salt 3006's list-of-dicts form,
// processed every loop_interval with `interval`, `enabled`,
// `disable_during_state_run`, `beacon_module` and `run_once`; each
// beacon's events become salt/beacon/<id>/<name>/… events with Salt's
// data shapes. The management the beacons execution module drives
// (add, modify, delete, enable, disable, save) is here too.
//
// Beacons: inotify (Linux inotify through golang.org/x/sys/unix),
// diskusage, load, memusage, service, status, btmp, wtmp and log.
package beacons

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/brinesalt/brine/internal/ordered"
)

// Env is what a beacon may use of the minion.
type Env struct {
	// ID is the minion id.
	ID string
	// Call runs an execution function (Salt's __salt__), for the
	// service and status beacons; nil means none is available.
	Call func(ctx context.Context, fun string, args ...any) (any, error)
}

// Beacon is one configured beacon's module instance; it keeps what Salt
// keeps in the module's globals and __context__ (last status, file
// positions, the inotify descriptor).
type Beacon interface {
	// Validate is the module's validate: "" when valid, else Salt's
	// comment.
	Validate(config any) string
	// Beacon is the module's beacon(config): the events, each a mapping
	// with an optional "tag" appended to the event tag.
	Beacon(ctx context.Context, env *Env, config []any) ([]*ordered.Map, error)
	// Close releases what the beacon holds (Salt's close, for inotify).
	Close()
}

var (
	regMu    sync.RWMutex
	registry = map[string]func() Beacon{}
)

// Register adds a beacon module; a duplicate is a programmer error.
func Register(name string, make func() Beacon) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("beacons: %q registered twice", name))
	}
	registry[name] = make
}

// Available lists the beacon modules, sorted (beacons.list_available).
func Available() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func lookup(name string) (func() Beacon, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	f, ok := registry[name]
	return f, ok
}

// ListToDict is salt.utils.beacons.list_to_dict: the list's mappings
// merged in order; items that are not mappings are skipped.
func ListToDict(config []any) *ordered.Map {
	out := ordered.New()
	for _, item := range config {
		if m, ok := item.(*ordered.Map); ok {
			m.Range(func(k, v any) bool {
				out.Set(k, v)
				return true
			})
		}
	}
	return out
}

// removeHidden is salt.utils.beacons.remove_hidden_options: items whose
// key starts with "_" dropped unless whitelisted.
func removeHidden(config []any, whitelist ...string) []any {
	out := make([]any, 0, len(config))
	for _, item := range config {
		m, ok := item.(*ordered.Map)
		if !ok {
			out = append(out, item)
			continue
		}
		hidden := false
		for _, k := range m.StringKeys() {
			if len(k) > 0 && k[0] == '_' && !contains(whitelist, k) {
				hidden = true
			}
		}
		if !hidden {
			out = append(out, item)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isList reports whether config is a list (most validate functions
// start with it).
func isList(config any) ([]any, bool) {
	l, ok := config.([]any)
	return l, ok
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
