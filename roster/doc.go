// Package roster turns rosters into SSH targets for salt-ssh.
//
// A roster backend (flat, and later ansible, sshconfig, scan, …) registers
// itself in init() under Salt's name and loads its inventory into a Roster;
// Roster.Targets selects targets with Salt's salt-ssh matchers (glob, pcre,
// list, nodegroup) and returns them fully resolved: roster_defaults merged
// under each target (salt/utils/roster_matcher.py get_data) and the
// master's ssh_* options filled in for every key still missing
// (salt/client/ssh/__init__.py SSH.__init__ and handle_ssh).
//
// A bad roster is never partly used: every problem found is reported at
// once as a go-multierror of *Error values naming the file and line.
package roster
