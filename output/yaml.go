package output

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

func init() { Register("yaml", yamlFunc) }

// yamlFunc is salt/output/yaml_out.py: salt.utils.yaml.safe_dump in
// block style (indent output_indent when set); a negative output_indent
// selects flow style. Return data arrives as plain dicts, which PyYAML
// sorts. "pretty" makes Python fail comparing str with int, and Salt falls
// back to nested.
func yamlFunc(data any, opts Options) (string, error) {
	if opts.IndentPretty {
		return Nested(data, opts), nil
	}
	do := saltyaml.DumpOptions{SortKeys: true}
	if opts.Indent != nil {
		if *opts.Indent >= 0 {
			do.Indent = *opts.Indent
		} else {
			do.Flow = true
		}
	}
	s, err := saltyaml.Dump(data, do)
	if err != nil {
		return "", err
	}
	return s + openEnded(data, s), nil
}

// openEnded returns PyYAML's document end marker "...\n", which its
// emitter writes after a document whose root is a plain scalar (the
// open_ended flag); quoted roots and collections do not get it.
func openEnded(data any, s string) string {
	switch data.(type) {
	case []any, *ordered.Map:
		return ""
	}
	if s == "" || strings.ContainsRune(`'"|>!&*`, rune(s[0])) {
		return ""
	}
	return "...\n"
}
