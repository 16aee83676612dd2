package roster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/hashicorp/go-multierror"
	"go.yaml.in/yaml/v4"
)

func init() { Register("flat", openFlat) }

// Flat is a loaded flat roster (salt/roster/flat.py): a YAML mapping of
// target ID to either a host string (short form, `web1: 10.0.0.5`) or a
// mapping of roster keys (long form), rendered through the render
// pipeline first. Entries keep the order of the file.
type Flat struct {
	File    string
	Entries []Entry
	cfg     Config
}

// Entry is one roster entry before selection: its ID, where it is, and
// its target with roster_defaults and Options applied.
type Entry struct {
	ID     string
	Line   int
	Target Target
}

// openFlat is the registry entry. A missing roster file is an empty
// roster, as in Salt, whose Roster.targets logs the OSError and goes on,
// so that `salt-ssh user@host` works without one.
func openFlat(ctx context.Context, cfg Config) (Roster, error) {
	f, err := LoadFlat(ctx, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		cfg.logger().Warn("roster file not found", logKeyFile, cfg.RosterFile())
		return &Flat{File: cfg.RosterFile(), cfg: cfg}, nil
	}
	return f, err
}

// LoadFlat reads cfg.RosterFile() and parses it with ParseFlat.
func LoadFlat(ctx context.Context, cfg Config) (*Flat, error) {
	file := cfg.RosterFile()
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read roster: %w", err)
	}
	return ParseFlat(ctx, src, file, cfg)
}

// ParseFlat renders and parses a flat roster. All problems — render and
// YAML errors, entries of the wrong shape, values of the wrong type — are
// returned together as a *multierror.Error of *Error; then the roster is
// nil and nothing may run.
func ParseFlat(ctx context.Context, src []byte, file string, cfg Config) (*Flat, error) {
	f := &Flat{File: file, cfg: cfg}
	// salt/template.py compile_template: an empty or blank file is an
	// empty roster.
	if len(bytes.TrimSpace(src)) == 0 {
		return f, nil
	}
	p, err := parsePipe(pipeFor(src, cfg.Renderer))
	if err != nil {
		return nil, &Error{File: file, Line: 1, Msg: err.Error()}
	}
	rendered, err := runText(ctx, p, src, file, cfg.Render)
	if err != nil {
		return nil, err
	}
	note := ""
	if !bytes.Equal(rendered, src) {
		note = " (line of the rendered roster)"
	}
	root, err := saltyaml.ParseNode(rendered, file)
	if err != nil {
		return nil, yamlError(err, file, note)
	}
	var errs *multierror.Error
	defaults, derr := defaultFields(cfg.RosterDefaults, cfg.Options)
	errs = multierror.Append(errs, derr...)
	entries, eerrs := f.entries(root, defaults, note)
	errs = multierror.Append(errs, eerrs...)
	if err := errs.ErrorOrNil(); err != nil {
		return nil, err
	}
	f.Entries = entries
	return f, nil
}

// entries walks the top-level mapping in file order.
func (f *Flat) entries(root *saltyaml.Node, defaults []field, note string) ([]Entry, []error) {
	if root == nil {
		return nil, nil
	}
	val, err := saltyaml.Decode(root)
	if err != nil {
		return nil, []error{yamlError(err, f.File, note)}
	}
	if val == nil {
		return nil, nil
	}
	m, ok := val.(*ordered.Map)
	if !ok {
		return nil, []error{&Error{File: f.File, Line: root.Line, Msg: "roster must be a mapping of target IDs, got " + typeName(val) + note}}
	}
	nodes := ownPairs(root)
	var out []Entry
	var errs []error
	m.Range(func(k, v any) bool {
		id := ordered.KeyString(k) // flat.py: str(minion)
		p, ok := nodes[id]
		line, vn := root.Line, root
		if ok {
			line, vn = p.key.Line, p.val
		}
		e, eerrs := f.entry(id, line, v, vn, defaults, note)
		errs = append(errs, eerrs...)
		if len(eerrs) == 0 {
			out = append(out, e)
		}
		return true
	})
	return out, errs
}

// entry builds one target: roster_defaults first, then the entry's own
// keys over them (roster_matcher.py get_data: a shallow dict.update).
func (f *Flat) entry(id string, line int, v any, vn *saltyaml.Node, defaults []field, note string) (Entry, []error) {
	own, err := entryFields(v, vn)
	if err != nil {
		return Entry{}, []error{&Error{File: f.File, Line: vn.Line, Target: id, Msg: err.Error() + note}}
	}
	fields := mergeFields(defaults, own)
	t, all := buildTarget(id, fields, f.cfg.Options)
	var errs []error
	for _, e := range all {
		if re, ok := e.(*Error); ok && re.Line > 0 {
			re.File = f.File
			re.Msg += note
			errs = append(errs, re)
		}
		// Errors in roster_defaults (line 0) were reported once already.
	}
	t.File, t.Line = f.File, line
	f.warnUnknown(t)
	return Entry{ID: id, Line: line, Target: t}, errs
}

// entryFields reads an entry's value: a string is the host, a mapping its
// keys, each with the line of its value node. Salt drops any other shape
// silently (roster_matcher.py get_data returns False); Brine refuses it.
func entryFields(v any, vn *saltyaml.Node) ([]field, error) {
	switch x := v.(type) {
	case string:
		return []field{{key: "host", val: x, raw: deref(vn).Value, line: vn.Line}}, nil
	case *ordered.Map:
		nodes := ownPairs(vn)
		var out []field
		x.Range(func(k, val any) bool {
			key := ordered.KeyString(k)
			fv := field{key: key, val: val, line: vn.Line}
			if p, ok := nodes[key]; ok {
				fv.line = p.val.Line
				if n := deref(p.val); n.Kind == yaml.ScalarNode {
					fv.raw = n.Value
				}
			}
			out = append(out, fv)
			return true
		})
		return out, nil
	}
	return nil, fmt.Errorf("entry must be a host string or a mapping of roster keys, got %s", typeName(v))
}

// warnUnknown logs keys Brine ignores, and sdb:// values, which Salt
// resolves through salt.config.apply_sdb and Brine does not yet.
func (f *Flat) warnUnknown(t Target) {
	log := f.cfg.logger()
	t.Extra.Range(func(k, _ any) bool {
		log.Warn("unknown roster key ignored", logKeyFile, f.File, logKeyTarget, t.ID, logKeyKey, ordered.KeyString(k))
		return true
	})
	for key, v := range map[string]string{"host": t.Host, "user": t.User, "passwd": t.Passwd.Reveal(),
		"priv": t.Priv, "priv_passwd": t.PrivPasswd.Reveal()} {
		if strings.HasPrefix(v, "sdb://") {
			log.Warn("sdb:// roster values are not resolved", logKeyFile, f.File, logKeyTarget, t.ID, logKeyKey, key)
		}
	}
}

// Log attribute keys.
const (
	logKeyFile   = "file"
	logKeyTarget = "host"
	logKeyKey    = "key"
)

// Targets selects entries by tgt and tgtType (glob, pcre, list,
// nodegroup), in roster order.
func (f *Flat) Targets(ctx context.Context, tgt, tgtType string) ([]Target, error) {
	m, err := f.cfg.matcher(tgt, tgtType)
	if err != nil {
		return nil, err
	}
	var out []Target
	for _, e := range f.Entries {
		if m(e.ID) {
			out = append(out, e.Target)
		}
	}
	return out, nil
}
