package archive

import (
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

func anys(s []string) []any {
	out := []any{}
	for _, x := range s {
		out = append(out, x)
	}
	return out
}

// shape builds list's return: the sorted names, or with verbose the
// per-kind lists and top-level entries.
func shape(m members, stripN int, verbose bool) any {
	dirs, files, links := m.dirs, m.files, m.links
	if stripN > 0 {
		dirs, files, links = strip(dirs, stripN), strip(files, stripN), strip(links, stripN)
	}
	sort.Strings(dirs)
	sort.Strings(files)
	sort.Strings(links)
	if !verbose {
		all := append(append(append([]string{}, dirs...), files...), links...)
		sort.Strings(all)
		return anys(all)
	}
	var top []string
	for _, d := range dirs {
		if strings.Count(d, "/") == 1 {
			top = append(top, d)
		}
	}
	if prefix := commonPrefix(dirs); strings.Contains(prefix, "/") {
		prefix = strings.SplitN(prefix, "/", 2)[0] + "/"
		if !contains(top, prefix) {
			top = append(top, prefix)
		}
	}
	return ordered.FromPairs("dirs", anys(dirs), "files", anys(files), "links", anys(links),
		"top_level_dirs", anys(top), "top_level_files", anys(noSlash(files)), "top_level_links", anys(noSlash(links)))
}

func noSlash(s []string) []string {
	var out []string
	for _, x := range s {
		if !strings.Contains(x, "/") {
			out = append(out, x)
		}
	}
	return out
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// commonPrefix is os.path.commonprefix: the longest common string
// prefix, character by character.
func commonPrefix(s []string) string {
	if len(s) == 0 {
		return ""
	}
	p := s[0]
	for _, x := range s[1:] {
		for !strings.HasPrefix(x, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}
