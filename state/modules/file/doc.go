// Package file is Salt's `file` execution module (salt/modules/file.py)
// for POSIX hosts: stats and ownership, reading and writing, regular
// expression edits (replace, search, line) and the managed-file
// machinery (source_list, get_managed, manage_file, check_perms) that
// the file state module drives.
//
// Return shapes, argument names and error texts follow Salt 3006. The
// helpers the state module shares are exported: NormalizeMode, Stats,
// CheckPerms, Diff, ManageFile and friends.
package file
