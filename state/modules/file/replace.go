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
	path = expandUser(path)
	link, _ := os.Readlink(path)
	given := path
	path = realPath(path)
	data, err := os.ReadFile(path)
	if err != nil {
		if o.IgnoreIfMissing && os.IsNotExist(err) {
			return false, nil
		}
		if os.IsNotExist(err) {
			return nil, modules.Invalidf("File not found: %s", path)
		}
		return nil, modules.Errorf("Unable to open file '%s'. Exception: %w", path, err)
	}
	if !IsText(data) {
		return nil, modules.Invalidf("Cannot perform string replacements on a binary file: %s", path)
	}
	if o.SearchOnly && (o.AppendIfNotFound || o.PrependIfNotFound) {
		return nil, modules.Invalidf("search_only cannot be used with append/prepend_if_not_found")
	}
	if o.AppendIfNotFound && o.PrependIfNotFound {
		return nil, modules.Invalidf("Only one of append and prepend_if_not_found is permitted")
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
	found := nrepl > 0
	changed := found && o.Pattern != o.Repl
	content := o.Repl
	if o.NotFoundContent != nil && *o.NotFoundContent != "" && (o.AppendIfNotFound || o.PrependIfNotFound) {
		content = *o.NotFoundContent
	}
	if o.AppendIfNotFound || o.PrependIfNotFound {
		probe, err := CompilePy("^"+regexp.QuoteMeta(content)+"(?:$|\r\n)", o.Flags)
		if err == nil && probe.Match(data) {
			found = true
		}
	}
	orig, newLines := ReadLinesSplit(data), ReadLinesSplit(result)
	if equalLines(orig, newLines) {
		changed = false
	}
	if !found && (o.AppendIfNotFound || o.PrependIfNotFound) {
		nf := o.Repl
		if o.NotFoundContent != nil {
			nf = *o.NotFoundContent
		}
		if o.PrependIfNotFound {
			newLines = append([]string{nf + "\n"}, newLines...)
		} else {
			if n := len(newLines); n > 0 && !strings.HasSuffix(newLines[n-1], "\n") {
				newLines[n-1] += "\n"
			}
			newLines = append(newLines, nf+"\n")
		}
		result = []byte(strings.Join(newLines, ""))
		changed = true
	}
	if changed && !o.DryRun {
		if err := writeKeepingMeta(path, data, result); err != nil {
			return nil, err
		}
		if o.Backup != "" {
			if err := os.WriteFile(path+o.Backup, data, 0o600); err != nil {
				return nil, modules.Errorf("Unable to move the temp file '%s' to the backup file '%s'. Exception: %w", path, path+o.Backup, err)
			}
			if link != "" {
				_ = os.Remove(given + o.Backup)
				_ = os.Symlink(link+o.Backup, given+o.Backup)
			}
		}
	}
	diff := strings.Join(UnifiedDiff(orig, newLines, "\n"), "")
	if o.ShowChanges {
		return diff, nil
	}
	return changed && diff != "", nil
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
