package roster

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// This file loads an inventory source as ansible-inventory does: a file
// (INI, YAML/JSON, or an executable script), or a directory of them,
// plus the group_vars/ and host_vars/ directories beside it.

// inventoryIgnoreExts is Ansible's default INVENTORY_IGNORE_EXTS: files
// in an inventory directory with these endings are skipped.
var inventoryIgnoreExts = []string{".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".ini", ".cfg", ".retry"}

// scriptTimeout bounds one run of a dynamic inventory script.
const scriptTimeout = 2 * time.Minute

// LoadInventory reads the inventory source at path. A directory is read
// file by file in name order (subdirectories too, hidden files,
// group_vars, host_vars and ignored extensions skipped); an executable
// file starting with "#!" is run with --list and its JSON read (the
// script inventory plugin); another file is YAML or INI (see
// ParseAnsibleInventory). Then group_vars/<group> and host_vars/<host>
// beside the source (files with .yml, .yaml, .json or no extension, or
// directories of them) are read.
func LoadInventory(ctx context.Context, path string, log *slog.Logger) (*Inventory, error) {
	inv := newInventory(path)
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read ansible inventory: %w", err)
	}
	base := filepath.Dir(path)
	if st.IsDir() {
		base = path
		err = inv.loadDir(ctx, path, 0)
	} else {
		err = inv.loadFile(ctx, path)
	}
	if err != nil {
		return nil, err
	}
	inv.finish()
	if err := inv.loadVarsDirs(base, log); err != nil {
		return nil, err
	}
	return inv, nil
}

func (inv *Inventory) loadDir(ctx context.Context, dir string, depth int) error {
	if depth > 16 {
		return fmt.Errorf("read ansible inventory %s: directories nested too deeply", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read ansible inventory: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "group_vars" || name == "host_vars" ||
			slices.ContainsFunc(inventoryIgnoreExts, func(x string) bool { return strings.HasSuffix(name, x) }) {
			continue
		}
		p := filepath.Join(dir, name)
		if e.IsDir() {
			err = inv.loadDir(ctx, p, depth+1)
		} else {
			err = inv.loadFile(ctx, p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (inv *Inventory) loadFile(ctx context.Context, path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read ansible inventory: %w", err)
	}
	if st, err := os.Stat(path); err == nil && st.Mode()&0o111 != 0 && bytes.HasPrefix(src, []byte("#!")) {
		return inv.runScript(ctx, path)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yml", ".yaml", ".json":
		return inv.parseYAML(src, path)
	}
	if isAnsibleYAML(src) {
		return inv.parseYAML(src, path)
	}
	return inv.parseINI(src, path)
}

// runScript runs a dynamic inventory script with --list and reads its
// JSON: groups as lists of hosts or as {hosts, vars, children}, and
// _meta.hostvars. Scripts without _meta (which Ansible then calls with
// --host for each host) give hosts without variables.
func (inv *Inventory) runScript(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "--list")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("run inventory script %s: %w: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	v, err := saltyaml.Load(out, path)
	if err != nil {
		return fmt.Errorf("inventory script %s: output is not JSON: %w", path, err)
	}
	top, ok := v.(*ordered.Map)
	if !ok {
		return fmt.Errorf("inventory script %s: output is not a JSON object", path)
	}
	return inv.addScriptData(top, path)
}

func (inv *Inventory) addScriptData(top *ordered.Map, path string) error {
	var err error
	hostvars, _ := top.Value("_meta").(*ordered.Map)
	hv, _ := hostvars.Value("hostvars").(*ordered.Map)
	top.Range(func(k, v any) bool {
		name := ordered.KeyString(k)
		if name == "_meta" {
			return true
		}
		inv.group(name, 0)
		hosts, vars, children := scriptGroup(v)
		for _, h := range hosts {
			vm, _ := hv.Value(h).(*ordered.Map)
			if err = inv.addHost(name, h, 0, vm); err != nil {
				err = fmt.Errorf("inventory script %s: %w", path, err)
				return false
			}
		}
		g := inv.groups[name]
		vars.Range(func(k, v any) bool { g.vars.Set(ordered.KeyString(k), v); return true })
		for _, c := range children {
			if err = inv.addChild(name, c, 0); err != nil {
				err = fmt.Errorf("inventory script %s: %w", path, err)
				return false
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	// Hosts only in _meta still exist, as in Ansible.
	hv.Range(func(k, v any) bool {
		h := ordered.KeyString(k)
		if _, ok := inv.hosts[h]; !ok {
			vm, _ := v.(*ordered.Map)
			err = inv.addHost("ungrouped", h, 0, vm)
		}
		return err == nil
	})
	return err
}

// scriptGroup reads one group of script output.
func scriptGroup(v any) (hosts []string, vars *ordered.Map, children []string) {
	strs := func(x any) []string {
		l, _ := x.([]any)
		var out []string
		for _, e := range l {
			out = append(out, ordered.KeyString(e))
		}
		return out
	}
	switch x := v.(type) {
	case []any:
		return strs(x), nil, nil
	case *ordered.Map:
		vars, _ = x.Value("vars").(*ordered.Map)
		return strs(x.Value("hosts")), vars, strs(x.Value("children"))
	}
	return nil, nil, nil
}

// loadVarsDirs reads group_vars and host_vars under base (Ansible's
// host_group_vars vars plugin).
func (inv *Inventory) loadVarsDirs(base string, log *slog.Logger) error {
	for _, name := range inv.gorder {
		m, err := readVarsEntry(filepath.Join(base, "group_vars", name), log)
		if err != nil {
			return err
		}
		g := inv.groups[name]
		m.Range(func(k, v any) bool { g.fileVars.Set(ordered.KeyString(k), v); return true })
	}
	for _, name := range inv.horder {
		m, err := readVarsEntry(filepath.Join(base, "host_vars", name), log)
		if err != nil {
			return err
		}
		h := inv.hosts[name]
		m.Range(func(k, v any) bool { h.fileVars.Set(ordered.KeyString(k), v); return true })
	}
	return nil
}

var varsExts = []string{"", ".yml", ".yaml", ".json"}

// readVarsEntry merges the vars files for one name: <p>, <p>.yml,
// <p>.yaml, <p>.json, or every such file in directory <p> (sorted).
func readVarsEntry(p string, log *slog.Logger) (*ordered.Map, error) {
	out := ordered.New()
	for _, ext := range varsExts {
		st, err := os.Stat(p + ext)
		if err != nil {
			continue
		}
		var files []string
		if st.IsDir() {
			err := filepath.WalkDir(p+ext, func(f string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") && slices.Contains(varsExts, filepath.Ext(f)) {
					files = append(files, f)
				}
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("read vars: %w", err)
			}
			slices.Sort(files)
		} else {
			files = []string{p + ext}
		}
		for _, f := range files {
			if err := mergeVarsFile(out, f, log); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func mergeVarsFile(dst *ordered.Map, f string, log *slog.Logger) error {
	src, err := os.ReadFile(f)
	if err != nil {
		return fmt.Errorf("read vars: %w", err)
	}
	if bytes.HasPrefix(src, []byte("$ANSIBLE_VAULT;")) {
		if log != nil {
			log.Warn("skipping vault-encrypted vars file", logKeyFile, f)
		}
		return nil
	}
	v, err := saltyaml.Load(src, f)
	if err != nil {
		return yamlError(err, f, "")
	}
	if v == nil {
		return nil
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return &Error{File: f, Line: 1, Msg: "vars file must hold a mapping, got " + typeName(v)}
	}
	m.Range(func(k, v any) bool { dst.Set(ordered.KeyString(k), v); return true })
	return nil
}
