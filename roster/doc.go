// Package roster turns rosters into SSH targets for salt-ssh.
//
// A roster backend registers itself in init() under Salt's name and loads
// its inventory into a Roster; Roster.Targets selects targets with Salt's
// salt-ssh matchers (glob, pcre, list, nodegroup) and returns them fully
// resolved: roster_defaults merged under each target
// (salt/utils/roster_matcher.py get_data) and the master's ssh_* options
// filled in for every key still missing (salt/client/ssh/__init__.py
// SSH.__init__ and handle_ssh).
//
// The backends, one file each:
//
//   - flat (flat.go): Salt's YAML roster, rendered through Jinja.
//   - ansible (ansible.go, inventory*.go): an Ansible inventory — INI,
//     YAML/JSON, executable script or directory, with group_vars and
//     host_vars — parsed natively (Salt shells out to ansible-inventory);
//     inventory groups are -N targets.
//   - sshconfig (sshconfig.go): the Host aliases of ~/.ssh/config, host
//     kept as the alias as in Salt (the dialer reads the same file for
//     HostName, ProxyJump, …), user, port and key resolved as `ssh -G`
//     would.
//   - scan (scan.go): a TCP-connect scan of an address or CIDR.
//
// `--roster flat,ansible` merges backends, later ones winning on equal
// IDs; `--roster flat,ansible=/etc/ansible/hosts` gives a backend its own
// file where Salt would hand roster_file to both (Registry.Open).
//
// -N looks a name up in ssh_list_nodegroups as Salt does, then (a Brine
// extension) in the master's compound nodegroups evaluated over roster
// IDs; the ansible backend first tries its inventory groups
// (Config.matcher, Ansible.Targets).
//
// A bad roster is never partly used: every problem found is reported at
// once as a go-multierror of *Error values naming the file and line.
package roster
