package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/output"
)

// keyOutput is Salt's key outputter (salt/output/key.py) for the zeromq
// transport: states sorted by name, each under its coloured heading,
// keys sorted, dict values shown as "key:  value". ok is false for data
// the outputter cannot show (Salt raises KeyError and falls back).
func keyOutput(data *ordered.Map, color bool) (string, bool) {
	c := output.Colors(color)
	cmap := map[string]string{
		pki.Pending: c.Red, pki.Accepted: c.Green, pki.Denied: c.Magenta,
		pki.Rejected: c.Blue, pki.Local: c.Magenta,
	}
	trans := map[string]string{
		pki.Pending:  c.LightRed + "Unaccepted Keys:" + c.EndC,
		pki.Accepted: c.LightGreen + "Accepted Keys:" + c.EndC,
		pki.Denied:   c.LightMagenta + "Denied Keys:" + c.EndC,
		pki.Rejected: c.LightBlue + "Rejected Keys:" + c.EndC,
		pki.Local:    c.LightMagenta + "Local Keys:" + c.EndC,
	}
	states := data.StringKeys()
	sort.Strings(states)
	var b strings.Builder
	for _, st := range states {
		head, ok := trans[st]
		if !ok {
			return "", false
		}
		b.WriteString(head + "\n")
		switch v := data.Value(st).(type) {
		case []any:
			names := make([]string, 0, len(v))
			for _, n := range v {
				names = append(names, ordered.KeyString(n))
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(&b, "%s%s%s\n", cmap[st], stripEsc(n), c.EndC)
			}
		case *ordered.Map:
			names := v.StringKeys()
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(&b, "%s%s:  %s%s\n", cmap[st], stripEsc(n), ordered.KeyString(v.Value(n)), c.EndC)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// stripEsc is salt.output.strip_esc_sequence.
func stripEsc(s string) string { return strings.ReplaceAll(s, "\x1b", "?") }
