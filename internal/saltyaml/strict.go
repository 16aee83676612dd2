package saltyaml

import (
	"regexp"
	"strconv"
	"strings"

	yamlv3 "gopkg.in/yaml.v3"

	"go.yaml.in/yaml/v4"
)

// libyamlCheck rejects what libyaml 0.2.5 (and so Salt) rejects but
// go.yaml.in/yaml/v4 accepts under YAML 1.2's looser rules: mostly tabs
// used as separation in block context ("- \ta", a line of only a tab),
// empty flow keys and a bare "...". gopkg.in/yaml.v3 still follows
// libyaml's scanner there, so the first document is parsed again with it;
// its errors carry only a line, so the position of a tab problem is
// recovered from the source.
func libyamlCheck(src []byte, filename string) error {
	var n yamlv3.Node
	err := yamlv3.Unmarshal(src, &n)
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := v3LineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	stage, ok := v3Trusted[msg]
	if !ok {
		return nil
	}
	e := &Error{File: filename, Line: line, Msg: msg, Stage: stage}
	switch {
	case strings.Contains(msg, "tab character") || strings.Contains(msg, "cannot start any token"):
		e.Line, e.Column = findTab(src, line)
		if strings.Contains(msg, "cannot start any token") {
			e.Context, e.ContextLine, e.ContextColumn = "while scanning for the next token", e.Line, e.Column
		}
	case stage == StageParser && v3LineRE.MatchString(strings.TrimPrefix(err.Error(), "yaml: ")):
		e.Line++ // v3 reports parser lines 0-based
	}
	return e
}

var v3LineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// findTab returns the position of the first tab on or after line, or the
// start of line when there is none.
func findTab(src []byte, line int) (int, int) {
	lines := strings.Split(string(src), "\n")
	for i := line - 1; i >= 0 && i < len(lines); i++ {
		if c := strings.IndexByte(lines[i], '\t'); c >= 0 {
			return i + 1, c + 1
		}
	}
	return line, 1
}

// checkAnchors rejects an anchor defined twice in one document, as
// libyaml's composer does ("found duplicate anchor"); YAML 1.2 allows it.
func checkAnchors(doc *yaml.Node, filename string) error {
	seen := map[string]*yaml.Node{}
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if n == nil || n.Kind == yaml.AliasNode {
			return nil
		}
		if n.Anchor != "" {
			if first, ok := seen[n.Anchor]; ok {
				return &Error{File: filename, Line: n.Line, Column: n.Column, Stage: StageComposer,
					Msg: "second occurrence", Context: "found duplicate anchor; first occurrence",
					ContextLine: first.Line, ContextColumn: first.Column}
			}
			seen[n.Anchor] = n
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(doc)
}

// v3Trusted lists the gopkg.in/yaml.v3 errors, with their stage, known to
// match libyaml where v4 is more lenient. Other v3 errors are not
// trusted: v3 lacks some escapes libyaml 0.2.5 has, rejects %YAML 1.2 and
// ends flow plain scalars at "?" followed by a tab.
var v3Trusted = map[string]string{
	"found character that cannot start any token":                  StageScanner,
	"found a tab character that violates indentation":              StageScanner,
	"found a tab character where an indentation space is expected": StageScanner,
	"did not find expected whitespace or line break":               StageScanner,
	"did not find expected alphabetic or numeric character":        StageScanner,
	"did not find expected node content":                           StageParser,
	"did not find expected key":                                    StageParser,
}
