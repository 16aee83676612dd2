package jinja

import (
	"errors"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// loadFormat parses text for Salt's load_yaml/load_json/load_text filters
// and the matching tags (salt/utils/jinja.py SerializerExtension).
func (r *runner) loadFormat(format, text string) (any, error) {
	switch format {
	case "yaml":
		v, err := saltyaml.Load([]byte(text), "")
		if err != nil {
			return nil, yamlLoadError(text, err)
		}
		return normalize(v), nil
	case "json":
		v, err := ordered.DecodeJSON(strings.NewReader(text))
		if err != nil {
			return nil, templateErr("Unable to load json from %s", text)
		}
		return normalize(v), nil
	}
	return text, nil
}

// yamlLoadError words a YAML failure as SerializerExtension.load_yaml
// does: the problem, then the excerpt of the YAML text around its line.
func yamlLoadError(text string, err error) error {
	msg := "Encountered error loading yaml: "
	var ye *saltyaml.Error
	if errors.As(err, &ye) && ye.Line > 0 {
		msg += ye.Msg + "\n" + getContext(text, ye.Line, "    <======================")
	} else {
		msg += err.Error()
	}
	return &tplError{kind: kindSyntax, msg: msg, err: err}
}
