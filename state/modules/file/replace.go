package file

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/state/modules"
)

// ReplaceOpts are file.replace's arguments after path.
type ReplaceOpts struct {
	Pattern, Repl      string
	Count              int
	Flags              int
	AppendIfNotFound   bool
	PrependIfNotFound  bool
	NotFoundContent    *string
	Backup             string // suffix; "" for none
	DryRun, SearchOnly bool
	ShowChanges        bool
	IgnoreIfMissing    bool
	BackslashLiteral   bool
}

// Replace is file.replace. It returns the unified diff when ShowChanges
// is set (empty for no change), else whether anything changed; with
// SearchOnly it returns whether the pattern matches.
func Replace(path string, o ReplaceOpts) (any, error) {
	given := expandUser(path)
	path = realPath(given)
	data, ok, err := readForReplace(path, o)
	if err != nil || !ok {
		return false, err
	}
	re, err := CompilePy(o.Pattern, o.Flags)
	if err != nil {
		return nil, modules.Errorf("%w", err)
	}
	if o.SearchOnly {
		return re.Match(data), nil
	}
	repl := o.Repl
	if o.BackslashLiteral {
		repl = strings.ReplaceAll(repl, `\`, `\\`)
	}
	parts, err := ParseRepl(re, repl)
	if err != nil {
		return nil, modules.Errorf("%w", err)
	}
	result, nrepl := Subn(re, parts, data, o.Count)
	changed := nrepl > 0 && o.Pattern != o.Repl
	orig, newLines := ReadLinesSplit(data), ReadLinesSplit(result)
	if equalLines(orig, newLines) {
		changed = false
	}
	if (o.AppendIfNotFound || o.PrependIfNotFound) && nrepl == 0 && !contentPresent(data, o) {
		newLines = addNotFound(newLines, o)
		result = []byte(strings.Join(newLines, ""))
		changed = true
	}
	if changed && !o.DryRun {
		if err := commitReplace(given, path, data, result, o.Backup); err != nil {
			return nil, err
		}
	}
	diff := strings.Join(UnifiedDiff(orig, newLines, "\n"), "")
	if o.ShowChanges {
		return diff, nil
	}
	return changed && diff != "", nil
}

// readForReplace reads path and checks replace's argument combinations;
// ok is false for a missing file with ignore_if_missing.
func readForReplace(path string, o ReplaceOpts) (data []byte, ok bool, err error) {
	data, err = os.ReadFile(path)
	switch {
	case err != nil && os.IsNotExist(err) && o.IgnoreIfMissing:
		return nil, false, nil
	case err != nil && os.IsNotExist(err):
		return nil, false, modules.Invalidf("File not found: %s", path)
	case err != nil:
		return nil, false, modules.Errorf("Unable to open file '%s'. Exception: %w", path, err)
	case !IsText(data):
		return nil, false, modules.Invalidf("Cannot perform string replacements on a binary file: %s", path)
	case o.SearchOnly && (o.AppendIfNotFound || o.PrependIfNotFound):
		return nil, false, modules.Invalidf("search_only cannot be used with append/prepend_if_not_found")
	case o.AppendIfNotFound && o.PrependIfNotFound:
		return nil, false, modules.Invalidf("Only one of append and prepend_if_not_found is permitted")
	}
	return data, true, nil
}

// contentPresent is replace's check that the line to append or prepend
// (not_found_content, else repl) is already a whole line of the file.
func contentPresent(data []byte, o ReplaceOpts) bool {
	content := o.Repl
	if o.NotFoundContent != nil && *o.NotFoundContent != "" {
		content = *o.NotFoundContent
	}
	probe, err := CompilePy("^"+regexp.QuoteMeta(content)+"(?:$|\r\n)", o.Flags)
	return err == nil && probe.Match(data)
}

// addNotFound appends or prepends not_found_content (else repl) as a
// line.
func addNotFound(lines []string, o ReplaceOpts) []string {
	nf := o.Repl
	if o.NotFoundContent != nil {
		nf = *o.NotFoundContent
	}
	if o.PrependIfNotFound {
		return append([]string{nf + "\n"}, lines...)
	}
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		lines[n-1] += "\n"
	}
	return append(lines, nf+"\n")
}

// commitReplace writes result in place and keeps the old content as
// path+backup (beside a symlink too, pointing at the target's backup).
func commitReplace(given, path string, data, result []byte, backup string) error {
	if err := writeKeepingMeta(path, data, result); err != nil {
		return err
	}
	if backup == "" {
		return nil
	}
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.WriteFile(path+backup, data, mode); err != nil {
		return modules.Errorf("Unable to move the temp file '%s' to the backup file '%s'. Exception: %w", path, path+backup, err)
	}
	if link, err := os.Readlink(given); err == nil {
		_ = os.Remove(given + backup)
		_ = os.Symlink(link+backup, given+backup)
	}
	return nil
}

// ReadLinesSplit is bytes.splitlines(True) over file content.
func ReadLinesSplit(b []byte) []string { return SplitLinesKeep(string(b)) }

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// writeKeepingMeta rewrites path in place (same inode, as Salt's
// preserve_inode), so owner and mode stay as they were.
func writeKeepingMeta(path string, old, data []byte) error {
	if bytes.Equal(old, data) {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return modules.Errorf("Exception: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return modules.Errorf("Unable to write file '%s'. Contents may be truncated. Exception: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return modules.Errorf("Exception: %w", err)
	}
	return nil
}

// expandUser is os.path.expanduser for "~" and "~/…".
func expandUser(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, p[1:])
		}
	}
	return p
}
