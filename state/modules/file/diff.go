package file

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"
)

// UnifiedDiff yields the lines of Python's difflib.unified_diff(a, b)
// with empty file names and dates and three lines of context: the
// "--- ", "+++ " and "@@ … @@" headers end with lineterm, the content
// lines keep whatever line ending they carry.
func UnifiedDiff(a, b []string, lineterm string) []string {
	m := difflib.NewMatcher(a, b)
	var out []string
	for _, group := range m.GetGroupedOpCodes(3) {
		if len(group) == 1 && group[0].Tag == 'e' {
			continue
		}
		if out == nil {
			out = append(out, "--- "+lineterm, "+++ "+lineterm)
		}
		first, last := group[0], group[len(group)-1]
		out = append(out, fmt.Sprintf("@@ -%s +%s @@%s",
			rangeUnified(first.I1, last.I2), rangeUnified(first.J1, last.J2), lineterm))
		for _, op := range group {
			if op.Tag == 'e' {
				for _, l := range a[op.I1:op.I2] {
					out = append(out, " "+l)
				}
				continue
			}
			if op.Tag == 'r' || op.Tag == 'd' {
				for _, l := range a[op.I1:op.I2] {
					out = append(out, "-"+l)
				}
			}
			if op.Tag == 'r' || op.Tag == 'i' {
				for _, l := range b[op.J1:op.J2] {
					out = append(out, "+"+l)
				}
			}
		}
	}
	return out
}

// rangeUnified is difflib's _format_range_unified.
func rangeUnified(start, stop int) string {
	begin, length := start+1, stop-start
	if length == 1 {
		return fmt.Sprint(begin)
	}
	if length == 0 {
		begin--
	}
	return fmt.Sprintf("%d,%d", begin, length)
}

// SplitLinesKeep is Python's bytes.splitlines(keepends=True) restricted
// to \n, \r\n and \r, as readlines sees a file.
func SplitLinesKeep(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			out = append(out, s)
			break
		}
		end := i + 1
		if s[i] == '\r' && end < len(s) && s[end] == '\n' {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// ReadLines is Python's file.readlines() on a binary file: lines split
// after each \n only.
func ReadLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// SplitLines is Python's str.splitlines() without line ends.
func SplitLines(s string) []string {
	lines := SplitLinesKeep(s)
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r\n")
	}
	return lines
}

// Diff is salt.utils.stringutils.get_diff over two file contents as
// salt.modules.file.get_diff reads them (readlines): the unified diff
// joined without separators, "--- \n+++ \n@@ -1 +1 @@\n-old\n+new\n".
// A binary side gives salt's _binary_replace wording instead.
func Diff(old, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	if msg := binaryReplace(old, new); msg != "" {
		return msg
	}
	return strings.Join(UnifiedDiff(ReadLines(string(old)), ReadLines(string(new)), "\n"), "")
}

func binaryReplace(old, new []byte) string {
	ob, nb := !IsText(old), !IsText(new)
	switch {
	case ob && nb:
		return "Replace binary file"
	case ob:
		return "Replace binary file with text file"
	case nb:
		return "Replace text file with binary file"
	}
	return ""
}

// IsText is salt.utils.files.is_text over the first 512 bytes: empty is
// text, a NUL byte is binary, otherwise text when it decodes as UTF-8 or
// when fewer than 30% of the bytes are non-text.
func IsText(b []byte) bool {
	if len(b) > 512 {
		b = b[:512]
	}
	if len(b) == 0 {
		return true
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return false
	}
	if utf8.Valid(b) {
		return true
	}
	nontext := 0
	for _, c := range b {
		if c < 32 && c != '\n' && c != '\r' && c != '\t' && c != '\b' && c != '\f' {
			nontext++
		} else if c >= 127 {
			nontext++
		}
	}
	return float64(nontext)/float64(len(b)) <= 0.30
}
