package roster

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// This file reads Ansible's INI inventory format the way Ansible's ini
// inventory plugin does (lib/ansible/plugins/inventory/ini.py).

var iniSectionRe = regexp.MustCompile(`^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:#.*)?$`)

// pendingDecl is a group named before it is declared: as a child in
// [x:children], or by [x:vars].
type pendingDecl struct {
	line    int
	state   string
	parents []string
}

// ParseAnsibleINI parses an INI inventory. The first problem is returned
// as an *Error with the file and line, as Ansible stops at the first.
func ParseAnsibleINI(src []byte, file string) (*Inventory, error) {
	inv := newInventory(file)
	if err := inv.parseINI(src, file); err != nil {
		return nil, err
	}
	inv.finish()
	return inv, nil
}

// parseINI adds one INI file to inv.
func (inv *Inventory) parseINI(src []byte, file string) error {
	group, state := "ungrouped", "hosts"
	pending := map[string]*pendingDecl{}
	fail := func(line int, format string, args ...any) error {
		return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	lineno := 0
	for sc.Scan() {
		lineno++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		if m := iniSectionRe.FindStringSubmatch(line); m != nil {
			group, state = m[1], m[2]
			if state == "" {
				state = "hosts"
			}
			if state != "hosts" && state != "children" && state != "vars" {
				return fail(lineno, "section [%s:%s] has unknown type: %s", group, state, state)
			}
			if _, ok := inv.groups[group]; !ok {
				if _, p := pending[group]; state == "vars" && !p {
					pending[group] = &pendingDecl{line: lineno, state: state}
				}
				inv.group(group, lineno)
			}
			if d, ok := pending[group]; ok && state != "vars" {
				if d.state == "children" {
					for _, p := range d.parents {
						if err := inv.addChild(p, group, lineno); err != nil {
							return fail(lineno, "%s", err.Error())
						}
					}
				}
				delete(pending, group)
			}
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			return fail(lineno, "invalid section entry: %q (names may not contain ':', ']' or spaces)", line)
		}
		var err error
		switch state {
		case "hosts":
			err = iniHostLine(inv, group, line, lineno)
		case "children":
			err = iniChildLine(inv, group, line, lineno, pending)
		case "vars":
			err = iniVarLine(inv, group, line)
		}
		if err != nil {
			return fail(lineno, "%s", err.Error())
		}
	}
	if err := sc.Err(); err != nil {
		return fail(lineno+1, "read inventory: %s", err.Error())
	}
	for name, d := range pending {
		if d.state == "vars" {
			return fail(d.line, "section [%s:vars] not valid for undefined group: %s", name, name)
		}
		return fail(d.line, "section [%s:children] includes undefined group: %s", d.parents[len(d.parents)-1], name)
	}
	return nil
}

// iniHostLine is `pattern[:port] key=value …`, split as shlex does with
// comments on; each value goes through Ansible's literal_eval.
func iniHostLine(inv *Inventory, group, line string, lineno int) error {
	toks, err := py.Split(stripINIComment(line))
	if err != nil {
		return fmt.Errorf("host line: %w", err)
	}
	if len(toks) == 0 {
		return nil
	}
	pat, port, err := splitHostPort(toks[0])
	if err != nil {
		return err
	}
	vars := ordered.New()
	for _, t := range toks[1:] {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return fmt.Errorf("expected key=value host variable assignment, got: %s", t)
		}
		vars.Set(k, pyLiteral(v))
	}
	if port > 0 {
		vars.Set("ansible_port", port)
	}
	names, err := expandHostRange(pat, maxInventoryHosts-len(inv.hosts))
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := inv.addHost(group, n, lineno, vars); err != nil {
			return err
		}
	}
	return nil
}

func iniChildLine(inv *Inventory, group, line string, lineno int, pending map[string]*pendingDecl) error {
	child := strings.TrimSpace(stripINIComment(line))
	if child == "" || strings.ContainsAny(child, " \t") {
		return fmt.Errorf("invalid group name in [%s:children]: %q", group, line)
	}
	if _, ok := inv.groups[child]; ok {
		return inv.addChild(group, child, lineno)
	}
	if d, ok := pending[child]; ok {
		d.parents = append(d.parents, group)
		if d.state != "children" {
			d.state, d.line = "children", lineno
		}
		return nil
	}
	pending[child] = &pendingDecl{line: lineno, state: "children", parents: []string{group}}
	return nil
}

// iniVarLine is `key = value`; the value is literal_eval'd, so quotes
// are removed and numbers and True/False become typed.
func iniVarLine(inv *Inventory, group, line string) error {
	k, v, ok := strings.Cut(line, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("expected key=value, got: %s", line)
	}
	inv.group(group, 0).vars.Set(k, pyLiteral(strings.TrimSpace(v)))
	return nil
}

// stripINIComment drops a # comment that starts a word outside quotes,
// as shlex with comments on does.
func stripINIComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			quote = c
		case c == '#':
			return s[:i]
		}
	}
	return s
}

// pyLiteral is Ansible's _parse_value: ast.literal_eval of the text when
// it is a Python literal Brine reads (int, float, True, False, None, a
// quoted string), else the text itself.
func pyLiteral(s string) any {
	t := strings.TrimSpace(s)
	switch t {
	case "True":
		return true
	case "False":
		return false
	case "None":
		return nil
	}
	if digits := strings.TrimLeft(t, "+-"); len(t)-len(digits) <= 1 && digits != "" && (digits == "0" || digits[0] >= '1' && digits[0] <= '9') && !strings.Contains(digits, "__") {
		if n, err := strconv.ParseInt(strings.ReplaceAll(t, "_", ""), 10, 64); err == nil {
			return int(n)
		}
	}
	if len(t) >= 2 && (t[0] == '\'' || t[0] == '"') && t[len(t)-1] == t[0] {
		if u, err := strconv.Unquote(`"` + strings.ReplaceAll(t[1:len(t)-1], `"`, `\"`) + `"`); err == nil {
			return u
		}
		return t[1 : len(t)-1]
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && strings.ContainsAny(t, ".eE") && !strings.ContainsAny(t, "xXnN") {
		return f
	}
	return s
}
