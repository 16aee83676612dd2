package file

import (
	"os"
	"strings"

	"github.com/brinesalt/brine/state/modules"
)

// BlockOpts are file.blockreplace's arguments after path.
type BlockOpts struct {
	MarkerStart, MarkerEnd, Content string
	AppendIfNotFound                bool
	PrependIfNotFound               bool
	Backup                          string // suffix; "" for none (Salt's False)
	DryRun, ShowChanges             bool
	// AppendNewline is nil for Salt's None: add a newline after the
	// content unless it already ends with one.
	AppendNewline                       *bool
	InsertBeforeMatch, InsertAfterMatch string
}

// BlockReplace is file.blockreplace: replace the lines between the
// markers with Content. It returns the diff (ShowChanges) or whether the
// file changed.
func BlockReplace(path string, o BlockOpts) (any, error) {
	n := 0
	for _, b := range []bool{o.AppendIfNotFound, o.PrependIfNotFound, o.InsertBeforeMatch != "", o.InsertAfterMatch != ""} {
		if b {
			n++
		}
	}
	if n > 1 {
		return nil, modules.Invalidf("Only one of append_if_not_found, prepend_if_not_found, insert_before_match, and insert_after_match is permitted")
	}
	path = expandUser(path)
	raw, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, modules.Invalidf("File not found: %s", path)
		}
		return nil, modules.Errorf("Failed to read from %s: %s", path, pyOSError(err))
	}
	if !IsText(raw) {
		return nil, modules.Invalidf("Cannot perform string replacements on a binary file: %s", path)
	}
	appendNL := o.AppendNewline != nil && *o.AppendNewline
	if o.AppendNewline == nil && !strings.HasSuffix(o.Content, "\n") {
		appendNL = true
	}
	b := block{o: o, appendNL: appendNL, content: strings.Split(strings.ReplaceAll(o.Content, "\r\n", "\n"), "\n")}
	orig := SplitLinesKeep(string(raw))
	newFile, found, err := b.replaceIn(orig)
	if err != nil {
		return nil, err
	}
	if !found {
		if newFile, found, err = b.insert(orig, newFile); err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, modules.Errorf("Cannot edit marked block. Markers were not found in file.")
	}
	diff := strings.Join(UnifiedDiff(orig, newFile, "\n"), "")
	if diff != "" && !o.DryRun {
		if o.Backup != "" {
			if err := os.WriteFile(path+o.Backup, raw, 0o600); err != nil {
				return nil, modules.Errorf("backup %s: %w", path, err)
			}
			if st, err := Stats(path, "", true); err == nil {
				_, _, _ = CheckPerms(path+o.Backup, nil, st.User, st.Group, st.Mode, false, false)
			}
		}
		if err := writeKeepingMeta(path, raw, []byte(strings.Join(newFile, ""))); err != nil {
			return nil, err
		}
	}
	if o.ShowChanges {
		return diff, nil
	}
	return diff != "", nil
}

type block struct {
	o        BlockOpts
	appendNL bool
	content  []string
	linesep  string
}

// lines renders the block: the start marker (unless the caller keeps
// the original one), the content lines and the end marker line.
func (b *block) lines(withStart bool, endLine string) []string {
	if endLine == "" {
		endLine = b.o.MarkerEnd
	}
	endLine = strings.TrimRight(endLine, "\r\n") + b.linesep
	var out []string
	if withStart {
		out = append(out, b.o.MarkerStart+b.linesep)
	}
	for i, l := range b.content {
		switch {
		case i+1 != len(b.content):
			out = append(out, l+b.linesep)
		case b.appendNL:
			out = append(out, l+b.linesep, endLine)
		default:
			out = append(out, l+endLine)
		}
	}
	if len(b.content) == 0 {
		out = append(out, endLine)
	}
	return out
}

// replaceIn rewrites an existing block; found reports whether a
// complete one was seen.
func (b *block) replaceIn(orig []string) (out []string, found bool, err error) {
	inBlock := false
	for _, l := range orig {
		if b.linesep == "" {
			switch {
			case strings.HasSuffix(l, "\r\n"):
				b.linesep = "\r\n"
			default:
				b.linesep = "\n"
			}
		}
		write := true
		if strings.Contains(l, b.o.MarkerStart) {
			inBlock = true
		} else if inBlock {
			write = false
			if i := strings.Index(l, b.o.MarkerEnd); i >= 0 {
				inBlock, found = false, true
				out = append(out, b.lines(false, l[i:])...)
			}
		}
		if write {
			out = append(out, l)
		}
	}
	if b.linesep == "" {
		b.linesep = "\n"
	}
	if inBlock {
		return nil, false, modules.Errorf("Unterminated marked block. End of file reached before marker_end.")
	}
	return out, found, nil
}

// insert places a new block by append/prepend_if_not_found or
// insert_before/after_match.
func (b *block) insert(orig, out []string) ([]string, bool, error) {
	switch {
	case b.o.PrependIfNotFound:
		return append(b.lines(true, ""), out...), true, nil
	case b.o.AppendIfNotFound:
		if n := len(out); n > 0 && !strings.HasSuffix(out[n-1], b.linesep) {
			out[n-1] += b.linesep
		}
		return append(out, b.lines(true, "")...), true, nil
	case b.o.InsertBeforeMatch != "" || b.o.InsertAfterMatch != "":
		pat := b.o.InsertBeforeMatch
		if pat == "" {
			pat = b.o.InsertAfterMatch
		}
		re, err := CompilePy(pat, 0)
		if err != nil {
			return nil, false, modules.Errorf("%s", err.Error())
		}
		for i, l := range orig {
			if !re.MatchString(l) && !re.MatchString(strings.TrimSuffix(l, "\n")) {
				continue
			}
			if b.o.InsertAfterMatch != "" {
				i++
			}
			res := append([]string{}, out[:i]...)
			res = append(res, b.lines(true, "")...)
			return append(res, out[i:]...), true, nil
		}
	}
	return out, false, nil
}
