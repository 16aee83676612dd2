package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/ordered"
	"github.com/brinesalt/brine/state/run/highstate"
)

// display prints {"local": ret} with the chosen outputter; without --out,
// state functions use the highstate outputter and others nested.
func display(w io.Writer, fun string, ret any, o options, opts *ordered.Map, env *modules.Env) error {
	data := ordered.FromPairs("local", ret)
	out := o.out
	if out == "" {
		if s, ok := opts.Value("output").(string); ok {
			out = s
		}
	}
	if out == "" {
		out = "nested"
		if strings.HasPrefix(fun, "state.") && !strings.HasPrefix(fun, "state.show_") {
			out = "highstate"
		}
	}
	switch out {
	case "json":
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", strings.Repeat(" ", o.outIndent))
		if err := enc.Encode(data); err != nil {
			return fmt.Errorf("encode json output: %w", err)
		}
		_, err := w.Write(b.Bytes())
		return err
	case "highstate":
		return highstate.Write(w, data, highstate.Options{Color: o.forceColor, Verbose: true})
	case "quiet":
		return nil
	case "raw":
		_, err := fmt.Fprintln(w, ordered.KeyString(data))
		return err
	}
	_, err := io.WriteString(w, nested(data, 0))
	return err
}

// nested is a plain rendering of Salt's nested outputter.
func nested(v any, indent int) string {
	pad := strings.Repeat(" ", indent)
	var b strings.Builder
	switch x := v.(type) {
	case *ordered.Map:
		x.Range(func(k, val any) bool {
			b.WriteString(pad + ordered.KeyString(k) + ":\n")
			b.WriteString(nested(val, indent+4))
			return true
		})
	case []any:
		for _, e := range x {
			switch e.(type) {
			case *ordered.Map, []any:
				b.WriteString(pad + "|_\n" + nested(e, indent+2))
			default:
				b.WriteString(pad + "- " + scalar(e) + "\n")
			}
		}
	default:
		for _, line := range strings.Split(scalar(v), "\n") {
			b.WriteString(pad + line + "\n")
		}
	}
	return b.String()
}

func scalar(v any) string { return ordered.KeyString(v) }
