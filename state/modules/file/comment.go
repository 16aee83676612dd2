package file

import (
	"os"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/state/modules"
)

// CommentLine is file.comment_line: comment out (cmnt) or uncomment the
// lines that regex matches from their start. It returns the diff of the
// changed lines, or false when nothing matched.
func CommentLine(path, regex, char string, cmnt bool, backup string) (any, error) {
	inner := strings.TrimSuffix(strings.TrimPrefix(regex, "^"), "$")
	end := ""
	if strings.HasSuffix(regex, "$") {
		end = "$"
	}
	if cmnt {
		start := ""
		if strings.HasPrefix(regex, "^") {
			start = "^"
		}
		regex = start + "(" + inner + ")" + end
	} else {
		regex = `^` + char + `\s*(` + inner + `)` + end
	}
	path = realPath(expandUser(path))
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, modules.Invalidf("File not found: %s", path)
	}
	if !IsText(raw) {
		return nil, modules.Invalidf("Cannot perform string replacements on a binary file: %s", path)
	}
	re, err := CompilePy(regex, 0)
	if err != nil {
		return nil, modules.Errorf("%s", err.Error())
	}
	var orig, changed, out []string
	for _, l := range ReadLines(string(raw)) {
		if matchStart(re, l) {
			nl := strings.TrimLeft(l, char)
			if cmnt {
				nl = char + l
			}
			orig, changed = append(orig, l), append(changed, nl)
			l = nl
		}
		out = append(out, l)
	}
	if len(orig) == 0 {
		return false, nil
	}
	if err := writeKeepingMeta(path, raw, []byte(strings.Join(out, ""))); err != nil {
		return nil, err
	}
	if backup != "" {
		if err := os.WriteFile(path+backup, raw, 0o600); err != nil {
			return nil, modules.Errorf("Unable to move the temp file '%s' to the backup file '%s'. Exception: %s", path, path+backup, err.Error())
		}
	}
	return strings.Join(UnifiedDiff(orig, changed, "\n"), ""), nil
}

// matchStart is Python's re.match on one line (with its newline, which
// Python's `$` may precede).
func matchStart(re *regexp.Regexp, l string) bool {
	for _, s := range []string{l, strings.TrimSuffix(l, "\n")} {
		if loc := re.FindStringIndex(s); loc != nil && loc[0] == 0 {
			return true
		}
	}
	return false
}

var unanchorRe = regexp.MustCompile(`^(\(\?[iLmsux]\))?\^?(.*?)\$?$`)

// Unanchor is file.comment's unanchor_regex: the pattern without a
// leading inline flag group, ^ and trailing $.
func Unanchor(regex string) string { return unanchorRe.ReplaceAllString(regex, "${2}") }

// HasUncommented is file.comment's search for
// ^(?!\s*<char>)\s*<unanchored>: a line that is not commented and whose
// text, after leading whitespace, matches.
func HasUncommented(path, unanchored, char string) (bool, error) {
	raw, err := os.ReadFile(expandUser(path))
	if err != nil {
		return false, modules.Invalidf("File not found: %s", path)
	}
	re, err := CompilePy(`\s*(?:`+unanchored+`)`, reMultiline)
	if err != nil {
		return false, modules.Errorf("%s", err.Error())
	}
	for _, l := range ReadLines(string(raw)) {
		if strings.HasPrefix(strings.TrimLeft(l, " \t\r\n\v\f"), char) {
			continue
		}
		if matchStart(re, l) {
			return true, nil
		}
	}
	return false, nil
}
