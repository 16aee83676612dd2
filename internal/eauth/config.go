package eauth

import (
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// ExternalAuth is the master's external_auth option: for each eauth
// backend, in configuration order, its ^options and the ACL of each user,
// group (a name ending in %) or "*".
type ExternalAuth struct {
	Backends []*BackendConfig
}

// BackendConfig is one backend's section of external_auth.
type BackendConfig struct {
	Name string
	// Options are the keys that start with ^ (file's ^filename), without
	// the ^, as salt/auth/file.py _get_file_auth_config reads them.
	Options map[string]any
	// Entries are the user, group and "*" entries in order.
	Entries []Entry
}

// Entry is one user, user pattern, group or "*" of a backend, with the
// ACL it grants.
type Entry struct {
	Match string // the key: a user name, an fnmatch/regex pattern, "*", or group% when Group
	Group bool
	ACL   []any
}

// Backend returns the named backend's configuration, or nil when
// external_auth has no such section.
func (e *ExternalAuth) Backend(name string) *BackendConfig {
	if e == nil {
		return nil
	}
	for _, b := range e.Backends {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// Names are the configured backends in order.
func (e *ExternalAuth) Names() []string {
	if e == nil {
		return nil
	}
	out := make([]string, len(e.Backends))
	for i, b := range e.Backends {
		out[i] = b.Name
	}
	return out
}

// ParseExternalAuth reads external_auth from the loaded master config
// (nil or an empty mapping: no eauth). It returns the configuration and
// a warning for each entry it could not take: an entry whose ACL is not
// a list is dropped (Salt would extend the ACL with the characters of a
// string, so "test.*" would allow every function), which denies that
// user rather than allowing too much. A value that is not a mapping of
// mappings is an error.
func ParseExternalAuth(v any) (*ExternalAuth, []string, error) {
	e := &ExternalAuth{}
	if v == nil {
		return e, nil, nil
	}
	top, ok := v.(*ordered.Map)
	if !ok {
		return nil, nil, fmt.Errorf("external_auth: expected a mapping of eauth backends, got %s", typeName(v))
	}
	var warns []string
	var err error
	top.Range(func(k, bv any) bool {
		name, ok := k.(string)
		if !ok {
			err = fmt.Errorf("external_auth: backend name %v is not a string", k)
			return false
		}
		var b *BackendConfig
		var w []string
		b, w, err = parseBackend(name, bv)
		warns = append(warns, w...)
		if err == nil {
			e.Backends = append(e.Backends, b)
		}
		return err == nil
	})
	if err != nil {
		return nil, warns, err
	}
	return e, warns, nil
}

func parseBackend(name string, v any) (*BackendConfig, []string, error) {
	b := &BackendConfig{Name: name, Options: map[string]any{}}
	if v == nil {
		return b, nil, nil // an empty section: nobody is allowed anything
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, nil, fmt.Errorf("external_auth: %s: expected a mapping of users to ACLs, got %s", name, typeName(v))
	}
	var warns []string
	m.Range(func(k, ev any) bool {
		key, ok := k.(string)
		if !ok {
			warns = append(warns, fmt.Sprintf("external_auth: %s: entry %v is not a string; ignored", name, k))
			return true
		}
		if opt, isOpt := strings.CutPrefix(key, "^"); isOpt {
			b.Options[opt] = ev
			return true
		}
		acl, ok := ev.([]any)
		if !ok {
			warns = append(warns, fmt.Sprintf("external_auth: %s: the ACL of %q is a %s, not a list; the entry is ignored", name, key, typeName(ev)))
			return true
		}
		group := strings.HasSuffix(key, "%")
		b.Entries = append(b.Entries, Entry{Match: key, Group: group, ACL: acl})
		return true
	})
	return b, warns, nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case []any:
		return "list"
	case *ordered.Map:
		return "mapping"
	case bool:
		return "boolean"
	}
	return "number"
}
