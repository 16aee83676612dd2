package roster

import (
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"go.yaml.in/yaml/v4"
)

// This file reads Ansible's YAML inventory format as its yaml inventory
// plugin does (lib/ansible/plugins/inventory/yaml.py):
//
//	all:
//	  hosts:
//	    web1:
//	      ansible_host: 10.0.0.5
//	  children:
//	    db:
//	      hosts:
//	        db[01:02].example.com:
//	      vars:
//	        ansible_user: deploy

// ParseAnsibleYAML parses a YAML (or JSON) inventory. Problems are *Error
// values with the file and line.
func ParseAnsibleYAML(src []byte, file string) (*Inventory, error) {
	inv := newInventory(file)
	if err := inv.parseYAML(src, file); err != nil {
		return nil, err
	}
	inv.finish()
	return inv, nil
}

// parseYAML adds one YAML file to inv.
func (inv *Inventory) parseYAML(src []byte, file string) error {
	root, err := saltyaml.ParseNode(src, file)
	if err != nil {
		return yamlError(err, file, "")
	}
	root = deref(root)
	if root == nil {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return &Error{File: file, Line: root.Line, Msg: "inventory must be a mapping of groups"}
	}
	p := yamlInv{inv: inv, file: file}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if _, err := p.group(root.Content[i], root.Content[i+1], 0); err != nil {
			return err
		}
	}
	return nil
}

// isAnsibleYAML reports whether src reads as a YAML inventory: a mapping
// whose values are all mappings or empty, which is what the yaml plugin
// accepts before Ansible falls back to the ini plugin.
func isAnsibleYAML(src []byte) bool {
	root, err := saltyaml.ParseNode(src, "")
	root = deref(root)
	if err != nil || root == nil || root.Kind != yaml.MappingNode {
		return false
	}
	for i := 1; i < len(root.Content); i += 2 {
		if v := deref(root.Content[i]); v.Kind != yaml.MappingNode && !isNull(v) {
			return false
		}
	}
	return true
}

func isNull(n *saltyaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == "" && n.Style == 0)
}

type yamlInv struct {
	inv  *Inventory
	file string
}

func (p yamlInv) fail(n *saltyaml.Node, format string, args ...any) error {
	return &Error{File: p.file, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

// key decodes a mapping key to its str().
func (p yamlInv) key(n *saltyaml.Node) (string, error) {
	v, err := saltyaml.Decode(n)
	if err != nil {
		return "", yamlError(err, p.file, "")
	}
	if _, ok := v.(*ordered.Map); ok || v == nil {
		return "", p.fail(n, "expected a name, got %s", typeName(v))
	}
	return ordered.KeyString(v), nil
}

// mapping decodes a mapping node; null is an empty mapping.
func (p yamlInv) mapping(n *saltyaml.Node) (*ordered.Map, error) {
	v, err := saltyaml.Decode(n)
	if err != nil {
		return nil, yamlError(err, p.file, "")
	}
	switch x := v.(type) {
	case nil:
		return ordered.New(), nil
	case *ordered.Map:
		return x, nil
	}
	return nil, p.fail(n, "expected a mapping, got %s", typeName(v))
}

// group reads one group definition: a mapping with hosts, vars and
// children, or null.
func (p yamlInv) group(kn, vn *saltyaml.Node, depth int) (string, error) {
	name, err := p.key(kn)
	if err != nil {
		return "", err
	}
	if depth > 100 {
		return "", p.fail(kn, "groups nested too deeply")
	}
	vn = deref(vn)
	if isNull(vn) {
		p.inv.group(name, kn.Line)
		return name, nil
	}
	if vn.Kind != yaml.MappingNode {
		return "", p.fail(vn, "group %q must be a mapping of hosts, vars and children", name)
	}
	p.inv.group(name, kn.Line)
	for i := 0; i+1 < len(vn.Content); i += 2 {
		sec, err := p.key(vn.Content[i])
		if err != nil {
			return "", err
		}
		if err := p.section(name, sec, deref(vn.Content[i+1]), depth); err != nil {
			return "", err
		}
	}
	return name, nil
}

func (p yamlInv) section(group, sec string, n *saltyaml.Node, depth int) error {
	if isNull(n) {
		return nil
	}
	if sec != "hosts" && sec != "vars" && sec != "children" {
		return p.fail(n, "unexpected key %q in group %q: only vars, children and hosts are valid", sec, group)
	}
	if n.Kind == yaml.ScalarNode && sec != "vars" {
		// yaml.py: a string section is {string: None}.
		n = &saltyaml.Node{Kind: yaml.MappingNode, Line: n.Line, Content: []*saltyaml.Node{n, {Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line}}}
	}
	if n.Kind != yaml.MappingNode {
		return p.fail(n, "invalid %q entry for group %q: requires a mapping", sec, group)
	}
	switch sec {
	case "vars":
		m, err := p.mapping(n)
		if err != nil {
			return err
		}
		g := p.inv.group(group, n.Line)
		m.Range(func(k, v any) bool { g.vars.Set(ordered.KeyString(k), v); return true })
	case "children":
		for i := 0; i+1 < len(n.Content); i += 2 {
			child, err := p.group(n.Content[i], n.Content[i+1], depth+1)
			if err != nil {
				return err
			}
			if err := p.inv.addChild(group, child, n.Content[i].Line); err != nil {
				return p.fail(n.Content[i], "%s", err.Error())
			}
		}
	case "hosts":
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := p.host(group, n.Content[i], n.Content[i+1]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p yamlInv) host(group string, kn, vn *saltyaml.Node) error {
	pat, err := p.key(kn)
	if err != nil {
		return err
	}
	vars, err := p.mapping(vn)
	if err != nil {
		return err
	}
	pat, port, err := splitHostPort(pat)
	if err != nil {
		return p.fail(kn, "%s", err.Error())
	}
	names, err := expandHostRange(pat, maxInventoryHosts-len(p.inv.hosts))
	if err != nil {
		return p.fail(kn, "%s", err.Error())
	}
	if port > 0 && !vars.Has("ansible_port") {
		vars = vars.Copy()
		vars.Set("ansible_port", port)
	}
	for _, h := range names {
		if err := p.inv.addHost(group, h, kn.Line, vars); err != nil {
			return p.fail(kn, "%s", err.Error())
		}
	}
	return nil
}
