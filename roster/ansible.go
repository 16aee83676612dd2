package roster

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/hashicorp/go-multierror"
)

func init() { Register("ansible", openAnsible) }

// Ansible is the ansible roster (salt/roster/ansible.py): the hosts of an
// Ansible inventory, read from roster_file (--roster-file, or
// `--roster ansible=PATH`), default <config_dir>/roster as in Salt.
//
// Salt runs `ansible-inventory -i FILE --list` and needs Ansible
// installed; Brine reads the inventory itself (LoadInventory): the INI
// format and the YAML (or JSON) format, chosen as Ansible chooses (a
// .yml, .yaml or .json file is YAML; another file is YAML when it parses
// as a mapping of groups, else INI), with groups, children,
// [group:vars], host ranges (web[01:03]) and host:port; executable
// inventory scripts (run with --list, _meta.hostvars read); inventory
// directories; and group_vars/ and host_vars/ beside the source.
// Vault-encrypted files are skipped with a warning; Jinja in variables is
// not evaluated; inventory plugins (aws_ec2, …) are not supported.
//
// Each host becomes a target named after it. Variables are combined as
// Ansible does (group depth, ansible_group_priority, name, then host
// vars) and mapped onto roster keys (see ansibleKeys); the rest become
// minion_opts, as in Salt. Salt maps only the old ansible_ssh_* names;
// Brine also reads the current ones (ansible_host, ansible_port,
// ansible_user, ansible_password, ansible_become, ansible_become_user).
//
// Targeting follows Salt: glob (and pcre, list) over host names, and -N
// with an inventory group name (all, ungrouped, or any group, children
// included). A -N name that is not a group falls back to the master's
// ssh_list_nodegroups and nodegroups (Config.matcher).
type Ansible struct {
	Inventory *Inventory
	Entries   []Entry
	cfg       Config
}

// ansibleKey maps Ansible variables to a roster key. When several are
// set the first listed wins, whatever level set it: Ansible's ssh
// connection and sudo become plugins list the legacy ansible_ssh_* and
// ansible_sudo_* names after the current ones, and the last one present
// wins (lib/ansible/config/manager.py get_config_value_and_origin).
type ansibleKey struct {
	vars []string
	key  string
}

// ansibleKeys lists the variable mapping; consumed variables are not
// copied into minion_opts.
var ansibleKeys = []ansibleKey{
	{[]string{"ansible_ssh_host", "ansible_host"}, "host"},
	{[]string{"ansible_ssh_port", "ansible_port"}, "port"},
	{[]string{"ansible_ssh_user", "ansible_user"}, "user"},
	{[]string{"ansible_ssh_password", "ansible_ssh_pass", "ansible_password"}, "passwd"},
	{[]string{"ansible_ssh_private_key_file", "ansible_private_key_file"}, "priv"},
	{[]string{"ansible_become", "ansible_sudo"}, "sudo"},
	{[]string{"ansible_sudo_user", "ansible_become_user"}, "sudo_user"},
}

// becomePassVars are Ansible's sudo password variables. Salt maps
// ansible_sudo_pass onto sudo, so a password turns sudo on; the password
// itself is not used, as salt-ssh answers sudo with passwd. They are
// never copied into minion_opts, where they would reach the host.
var becomePassVars = []string{"ansible_become_pass", "ansible_become_password", "ansible_sudo_pass", "ansible_sudo_password"}

func openAnsible(ctx context.Context, cfg Config) (Roster, error) {
	return LoadAnsible(ctx, cfg)
}

// LoadAnsible reads cfg.RosterFile() as an Ansible inventory source
// (LoadInventory) and builds its targets.
func LoadAnsible(ctx context.Context, cfg Config) (*Ansible, error) {
	inv, err := LoadInventory(ctx, cfg.RosterFile(), cfg.logger())
	if err != nil {
		return nil, err
	}
	return NewAnsible(inv, cfg)
}

// ParseAnsibleInventory parses src in the format Ansible would pick for
// file (see Ansible).
func ParseAnsibleInventory(src []byte, file string) (*Inventory, error) {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".yml", ".yaml", ".json":
		return ParseAnsibleYAML(src, file)
	}
	if isAnsibleYAML(src) {
		return ParseAnsibleYAML(src, file)
	}
	return ParseAnsibleINI(src, file)
}

// NewAnsible builds the targets of inv; bad values (a port that is not a
// number, …) are reported together, each with its host's line.
func NewAnsible(inv *Inventory, cfg Config) (*Ansible, error) {
	a := &Ansible{Inventory: inv, cfg: cfg}
	var errs *multierror.Error
	defaults, derr := defaultFields(cfg.RosterDefaults, cfg.Options)
	errs = multierror.Append(errs, derr...)
	for _, name := range inv.Hosts("all") {
		e, eerrs := a.entry(name, defaults)
		errs = multierror.Append(errs, eerrs...)
		if len(eerrs) == 0 {
			a.Entries = append(a.Entries, e)
		}
	}
	if err := errs.ErrorOrNil(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Ansible) entry(name string, defaults []field) (Entry, []error) {
	line := a.Inventory.hosts[name].line
	own, rest := ansibleFields(a.Inventory.HostVars(name), line)
	if rest.Len() > 0 {
		own = append(own, field{key: "minion_opts", val: rest, line: line})
	}
	log := a.cfg.logger()
	if m := rest.Value("ansible_become_method"); m != nil && m != "sudo" {
		log.Warn("ansible_become_method is not sudo; salt-ssh uses sudo", logKeyFile, a.Inventory.File, logKeyTarget, name)
	}
	switch c := rest.Value("ansible_connection"); c {
	case nil, "ssh", "smart", "paramiko", "paramiko_ssh":
	default:
		log.Warn("ansible_connection ignored; salt-ssh connects over ssh", logKeyFile, a.Inventory.File,
			logKeyTarget, name, "connection", ordered.KeyString(c))
	}
	t, all := buildTarget(name, mergeFields(defaults, own), a.cfg.Options)
	mine := map[string]bool{}
	for _, f := range own {
		mine[f.key] = true
	}
	var errs []error
	for _, e := range all {
		// Errors in roster_defaults were reported once already.
		if re, ok := e.(*Error); ok && mine[strings.SplitN(re.Msg, ":", 2)[0]] {
			re.File = a.Inventory.File
			errs = append(errs, re)
		}
	}
	t.File, t.Line = a.Inventory.File, line
	return Entry{ID: name, Line: line, Target: t}, errs
}

// ansibleFields maps host variables onto roster fields and returns the
// variables left over.
func ansibleFields(vars *ordered.Map, line int) ([]field, *ordered.Map) {
	rest := vars.Copy()
	var out []field
	for _, k := range ansibleKeys {
		found := false
		for _, v := range k.vars {
			val, ok := rest.Get(v)
			rest.Delete(v)
			if !ok || found {
				continue
			}
			found = true
			f := field{key: k.key, val: val, line: line}
			switch k.key {
			case "sudo":
				f.val = ansibleBool(val)
			case "priv":
				f.val = expandTilde(val)
			case "sudo_user":
				if val == "root" {
					continue // become_user defaults to root; salt's sudo_user is "another user"
				}
			}
			out = append(out, f)
		}
	}
	hasSudo := false
	for _, f := range out {
		hasSudo = hasSudo || f.key == "sudo"
	}
	for _, v := range becomePassVars {
		if val, ok := rest.Get(v); ok {
			rest.Delete(v)
			if !hasSudo && val != nil && val != "" {
				out = append(out, field{key: "sudo", val: true, line: line})
				hasSudo = true
			}
		}
	}
	return out, rest
}

// ansibleBool is Ansible's boolean(): yes, on, 1, true, t and y are true
// (any case); anything else is passed on for the roster to reject unless
// it is a false word.
func ansibleBool(v any) any {
	switch x := v.(type) {
	case bool:
		return x
	case int:
		if x == 0 || x == 1 {
			return x == 1
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "yes", "on", "1", "true", "t", "y":
			return true
		case "no", "off", "0", "false", "f", "n", "":
			return false
		}
	}
	return v
}

// expandTilde expands a leading ~/ in a key path as Ansible does.
func expandTilde(v any) any {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, "~/") {
		return v
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return v
	}
	return filepath.Join(home, s[2:])
}

// Targets selects hosts: -N takes an inventory group, the other types
// match host names (Salt's ansible roster matches glob and list).
func (a *Ansible) Targets(_ context.Context, tgt, tgtType string) ([]Target, error) {
	if tgtType == TgtNodegroup {
		if _, ok := a.Inventory.groups[tgt]; ok {
			in := map[string]bool{}
			for _, h := range a.Inventory.Hosts(tgt) {
				in[h] = true
			}
			return a.pick(func(id string) bool { return in[id] }), nil
		}
	}
	m, err := a.cfg.matcher(tgt, tgtType)
	if err != nil {
		return nil, err
	}
	return a.pick(m), nil
}

func (a *Ansible) pick(m func(string) bool) []Target {
	var out []Target
	for _, e := range a.Entries {
		if m(e.ID) {
			out = append(out, e.Target)
		}
	}
	return out
}
