// Package txtar reads and writes the golden-test archives under
// testdata: a free-text comment, then files, each introduced by a line
// "-- name --" (the format of golang.org/x/tools/txtar, kept here so the
// tests need no extra module).
package txtar

import "strings"

// Archive is a comment followed by named files.
type Archive struct {
	Comment string
	Files   []File
}

// File is one file of an archive.
type File struct{ Name, Data string }

// Parse splits s into its comment and files.
func Parse(s string) Archive {
	var a Archive
	cur := -1
	for _, line := range strings.SplitAfter(s, "\n") {
		t := strings.TrimRight(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			a.Files = append(a.Files, File{Name: strings.TrimSpace(t[3 : len(t)-3])})
			cur = len(a.Files) - 1
			continue
		}
		if cur < 0 {
			a.Comment += line
		} else {
			a.Files[cur].Data += line
		}
	}
	return a
}

// Format is the inverse of Parse; a file's data gets a final newline.
func (a Archive) Format() string {
	var b strings.Builder
	b.WriteString(a.Comment)
	for _, f := range a.Files {
		b.WriteString("-- " + f.Name + " --\n")
		b.WriteString(f.Data)
		if f.Data != "" && !strings.HasSuffix(f.Data, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
