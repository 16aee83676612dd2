package file

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// LineOpts are file.line's arguments after path. Nil pointers are None.
type LineOpts struct {
	Content, Match, Location, Before, After *string
	Mode                                    string
	ShowChanges, Backup, Quiet, Indent      bool
	Test                                    bool
}

// Line is file.line: it returns the diff (when ShowChanges and
// something changed) or whether the file changed.
func Line(path string, o LineOpts) (any, error) {
	path = realPath(expandUser(path))
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		if !o.Quiet {
			return nil, modules.Errorf("File \"%s\" does not exists or is not a file.", path)
		}
		return false, nil
	}
	mode := strings.ToLower(o.Mode)
	switch mode {
	case "insert", "ensure", "delete", "replace":
	case "":
		return nil, modules.Errorf("Mode was not defined. How to process the file?")
	default:
		return nil, modules.Errorf("Unknown mode: \"%s\"", o.Mode)
	}
	if mode != "delete" && o.Content == nil {
		return nil, modules.Errorf("Content can only be empty if mode is \"delete\"")
	}
	if o.Before == nil && o.After == nil && (o.Match == nil || *o.Match == "") {
		o.Match = o.Content
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, modules.Errorf("read %s: %w", path, err)
	}
	text := universalNewlines(string(raw))
	body := ReadLines(text)
	before := strings.Join(body, "")
	if n := len(body); n > 0 && eol(body[n-1]) != "" {
		body = append(body, "")
	}
	if len(raw) == 0 && (mode == "delete" || mode == "replace") {
		body = nil
	}
	body, err = setLine(body, o, mode)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 {
		for i, l := range body {
			if eol(l) == "" && i+1 < len(body) {
				prev := 1
				if i > 0 {
					prev = i - 1
				}
				body[i] = setLineEOL(body[prev], l)
			}
		}
		if body[len(body)-1] == "" {
			body = body[:len(body)-1]
		}
	}
	after := strings.Join(body, "")
	changed := before != after
	if o.Backup && changed && !o.Test {
		bk := fmt.Sprintf("%s.%s", path, time.Now().Format("2006-01-02-15-04-05"))
		if err := os.WriteFile(bk, raw, 0o600); err != nil {
			return nil, modules.Errorf("Unable to create the backup file of %s. Exception: %w", path, err)
		}
	}
	var diff string
	if changed {
		if o.ShowChanges {
			diff = strings.Join(UnifiedDiff(SplitLinesKeep(text), body, "\n"), "")
		}
		if !o.Test {
			if err := writeKeepingMeta(path, raw, []byte(after)); err != nil {
				return nil, err
			}
		}
	}
	if o.ShowChanges && diff != "" {
		return diff, nil
	}
	return changed, nil
}

// universalNewlines is Python's text-mode reading: \r\n and \r become \n.
func universalNewlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// eol is _get_eol: the line's ending, "" when it has none.
func eol(l string) string {
	switch {
	case strings.HasSuffix(l, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(l, "\n"), strings.HasSuffix(l, "\r"):
		return l[len(l)-1:]
	}
	return ""
}

func setLineEOL(src, l string) string {
	e := eol(src)
	if e == "" {
		e = "\n"
	}
	return strings.TrimRight(l, " \t\r\n\v\f") + e
}

func setLineIndent(src, l string, indent bool) string {
	if !indent {
		return l
	}
	i := 0
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return src[:i] + strings.TrimLeft(l, " \t\r\n\v\f")
}

// regexToStatic is _regex_to_static: the lines the expression matches
// (as a DOTALL regex, or as a substring); nil for an empty expression.
func regexToStatic(lines []string, expr *string) ([]string, error) {
	if expr == nil || *expr == "" || len(lines) == 0 {
		return nil, nil
	}
	re, err := CompilePy(*expr, reDotAll)
	if err != nil {
		return nil, modules.Errorf("%s: '%s'", err.Error(), *expr)
	}
	out := []string{}
	for _, l := range lines {
		// Python's `$` also matches before a final newline; RE2's does
		// not, so the line is tried without its newline too.
		if re.MatchString(l) || re.MatchString(strings.TrimSuffix(l, "\n")) || strings.Contains(l, *expr) {
			out = append(out, l)
		}
	}
	return out, nil
}

func assertOccurrence(probe []string, target string) error {
	switch {
	case len(probe) > 1:
		return modules.Errorf("Found more than expected occurrences in \"%s\" expression", target)
	case len(probe) == 0:
		return modules.Errorf("Found less than expected occurrences in \"%s\" expression", target)
	}
	return nil
}

func indexOf(lines []string, l string) int {
	for i, x := range lines {
		if x == l {
			return i
		}
	}
	return -1
}

func insertAt(lines []string, i int, l string) []string {
	lines = append(lines, "")
	copy(lines[i+1:], lines[i:])
	lines[i] = l
	return lines
}

// setLine is _set_line.
func setLine(lines []string, o LineOpts, mode string) ([]string, error) {
	after, err := regexToStatic(lines, o.After)
	if err != nil {
		return nil, err
	}
	before, err := regexToStatic(lines, o.Before)
	if err != nil {
		return nil, err
	}
	match, err := regexToStatic(lines, o.Match)
	if err != nil {
		return nil, err
	}
	content := ""
	if o.Content != nil {
		content = *o.Content
	}
	switch {
	case len(lines) == 0 && (mode == "delete" || mode == "replace"):
		return nil, nil
	case mode == "delete" && len(match) > 0:
		var out []string
		for _, l := range lines {
			if l != match[0] {
				out = append(out, l)
			}
		}
		return out, nil
	case mode == "replace" && len(match) > 0:
		i := indexOf(lines, match[0])
		lines[i] = setLineIndent(lines[i], content, o.Indent)
		return lines, nil
	case mode == "insert":
		return insertLine(lines, o, content, before, after)
	case mode == "ensure":
		return ensureLine(lines, o, content, before, after)
	}
	return lines, nil
}

func insertLine(lines []string, o LineOpts, content string, before, after []string) ([]string, error) {
	// before and after are nil (None) here also when the file is empty,
	// as _regex_to_static returns None for no lines.
	if before == nil && after == nil && o.Location == nil {
		return nil, modules.Errorf("On insert either \"location\" or \"before/after\" conditions are required.")
	}
	if o.Location != nil && *o.Location != "" {
		switch *o.Location {
		case "end":
			if len(lines) > 0 {
				return append(lines, setLineIndent(lines[len(lines)-1], content, o.Indent)), nil
			}
			return append(lines, content), nil
		case "start":
			if len(lines) > 0 {
				return insertAt(lines, 0, setLineEOL(lines[0], content)), nil
			}
			return []string{content + "\n"}, nil
		}
		return lines, nil
	}
	switch {
	case len(before) > 0 && len(after) > 0:
		if err := assertOccurrence(before, "before"); err != nil {
			return nil, err
		}
		if err := assertOccurrence(after, "after"); err != nil {
			return nil, err
		}
		last := indexOf(lines, before[0])
		return insertAt(lines, last, setLineIndent(lines[last], content, o.Indent)), nil
	case len(after) > 0:
		if err := assertOccurrence(after, "after"); err != nil {
			return nil, err
		}
		i := indexOf(lines, after[0])
		if i+1 >= len(lines) || strings.TrimRight(lines[i+1], "\r\n") != strings.TrimRight(content, "\r\n") {
			lines = insertAt(lines, i+1, setLineIndent(lines[i], content, o.Indent))
		}
		return lines, nil
	case len(before) > 0:
		if err := assertOccurrence(before, "before"); err != nil {
			return nil, err
		}
		i := indexOf(lines, before[0])
		prev := lines[(i-1+len(lines))%len(lines)]
		if strings.TrimRight(prev, "\r\n") != strings.TrimRight(content, "\r\n") {
			lines = insertAt(lines, i, setLineIndent(lines[i], content, o.Indent))
		}
		return lines, nil
	}
	return nil, modules.Errorf("Neither before or after was found in file")
}

func ensureLine(lines []string, o LineOpts, content string, before, after []string) ([]string, error) {
	switch {
	case len(before) > 0 && len(after) > 0:
		if err := assertOccurrence(after, "after"); err != nil {
			return nil, err
		}
		if err := assertOccurrence(before, "before"); err != nil {
			return nil, err
		}
		ai, bi := indexOf(lines, after[0]), indexOf(lines, before[0])
		for _, l := range lines {
			if strings.TrimLeft(l, " \t\r\n\v\f") == content {
				return lines, nil
			}
		}
		switch {
		case ai+1 == bi:
			return insertAt(lines, ai+1, setLineIndent(lines[ai], content, o.Indent)), nil
		case ai+2 == bi:
			lines[ai+1] = setLineIndent(lines[ai], content, o.Indent)
			return lines, nil
		}
		return nil, modules.Errorf("Found more than one line between boundaries \"before\" and \"after\".")
	case len(before) > 0:
		if err := assertOccurrence(before, "before"); err != nil {
			return nil, err
		}
		bi := indexOf(lines, before[0])
		prev := lines[(bi-1+len(lines))%len(lines)]
		if bi == 0 || strings.TrimRight(prev, "\r\n") != strings.TrimRight(content, "\r\n") {
			lines = insertAt(lines, bi, setLineIndent(prev, content, o.Indent))
		}
		return lines, nil
	case len(after) > 0:
		if err := assertOccurrence(after, "after"); err != nil {
			return nil, err
		}
		ai := indexOf(lines, after[0])
		if ai+1 >= len(lines) || strings.TrimRight(lines[ai+1], "\r\n") != strings.TrimRight(content, "\r\n") {
			lines = insertAt(lines, ai+1, setLineIndent(lines[ai], content, o.Indent))
		}
		return lines, nil
	}
	return nil, modules.Errorf("Wrong conditions? Unable to ensure line without knowing where to put it before and/or after.")
}

// WhitespaceSplitRegex is salt.utils.stringutils.build_whitespace_split_regex:
// a multiline pattern matching text's lines with any whitespace between
// their shell-like words. A line with an unclosed quote is shlex's
// ValueError, as in Salt.
func WhitespaceSplitRegex(text string) (string, error) {
	var b strings.Builder
	for _, l := range SplitLines(text) {
		parts, err := whitespaceWords(l)
		if err != nil {
			return "", err
		}
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		b.WriteString(`(?:[\s]+)?` + strings.Join(parts, `(?:[\s]+)?`) + `(?:[\s]+)?`)
	}
	return `(?m)^` + b.String() + `$`, nil
}

// Search is file.search: whether pattern matches the file's content.
func Search(path, pattern string, flags int, multiline, ignoreMissing bool) (bool, error) {
	if multiline {
		flags |= reMultiline
	}
	v, err := Replace(path, ReplaceOpts{Pattern: pattern, Flags: flags, DryRun: true, SearchOnly: true, IgnoreIfMissing: ignoreMissing})
	if err != nil {
		return false, err
	}
	b, _ := v.(bool)
	return b, nil
}

// AppendLines is file.append: make sure the file ends with a newline
// (unless empty), then add each line with a newline.
func AppendLines(path string, lines []string) (string, error) {
	path = expandUser(path)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", modules.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	var out strings.Builder
	if st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			out.WriteByte('\n')
		}
	}
	for _, l := range lines {
		out.WriteString(l + "\n")
	}
	if _, err := f.WriteAt([]byte(out.String()), st.Size()); err != nil {
		return "", modules.Errorf("write %s: %w", path, err)
	}
	return fmt.Sprintf("Wrote %d lines to \"%s\"", len(lines), path), nil
}

// PrependLines is file.prepend.
func PrependLines(path string, lines []string) (string, error) {
	path = expandUser(path)
	old, _ := os.ReadFile(path)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	b.WriteString(universalNewlines(string(old)))
	if err := writeOrCreate(path, []byte(b.String())); err != nil {
		return "", err
	}
	return fmt.Sprintf("Prepended %d lines to \"%s\"", len(lines), path), nil
}

func writeOrCreate(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o666); err != nil {
		return modules.Errorf("write %s: %w", path, err)
	}
	return nil
}

// whitespaceWords is build_whitespace_split_regex's __build_parts: a
// non-POSIX shlex that splits at whitespace, with only the quote kind
// the line does not contain active (neither when it holds '\").
func whitespaceWords(s string) ([]string, error) {
	l := py.NewLexer(false)
	l.WhitespaceSplit = true
	l.Commenters = ""
	switch {
	case strings.Contains(s, `'\"`):
		l.Quotes = ""
	case strings.Contains(s, "'"):
		l.Quotes = `"`
	case strings.Contains(s, `"`):
		l.Quotes = "'"
	}
	return l.Tokens(s)
}
