package jinja

import (
	"strings"

	"github.com/brinesalt/brine/state/ordered"
	"github.com/brinesalt/brine/state/saltyaml"
)

// loadFormat parses text for Salt's load_yaml/load_json/load_text filters
// and the matching tags (salt/utils/jinja.py SerializerExtension).
func (r *runner) loadFormat(format, text string) (any, error) {
	switch format {
	case "yaml":
		v, err := saltyaml.Load([]byte(text), "")
		if err != nil {
			return nil, templateErr("Encountered error loading yaml: %s", err.Error())
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
