// Package highstate is Salt's highstate outputter (salt/output/highstate.py)
// for state run returns: one block per state in run order, then a summary.
// It lives here until the output package's registry takes it over.
package highstate

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/brinesalt/brine/state/ordered"
)

// Options tune the output.
type Options struct {
	Color bool
	// Verbose shows successful states without changes too (state_verbose).
	Verbose bool
}

const (
	green  = "\033[0;32m"
	red    = "\033[0;31m"
	yellow = "\033[0;33m"
	cyan   = "\033[0;36m"
	end    = "\033[0;0m"
)

// Write prints data, a mapping of minion ID to its return. A return that
// is not a state run (an error list, a string) is printed as Salt does
// for those: the items under the minion ID.
func Write(w io.Writer, data *ordered.Map, o Options) error {
	var b strings.Builder
	data.Range(func(k, v any) bool {
		host := ordered.KeyString(k)
		switch x := v.(type) {
		case *ordered.Map:
			writeRun(&b, host, x, o)
		case []any:
			b.WriteString(o.col(red, host+":") + "\n")
			for _, e := range x {
				b.WriteString(o.col(red, "    "+ordered.KeyString(e)) + "\n")
			}
		default:
			b.WriteString(host + ":\n    " + ordered.KeyString(v) + "\n")
		}
		return true
	})
	_, err := io.WriteString(w, b.String())
	return err
}

func (o Options) col(c, s string) string {
	if !o.Color {
		return s
	}
	return c + s + end
}

type entry struct {
	tag string
	ret *ordered.Map
	num int
}

func writeRun(b *strings.Builder, host string, run *ordered.Map, o Options) {
	var entries []entry
	run.Range(func(k, v any) bool {
		m, ok := v.(*ordered.Map)
		if !ok {
			return true
		}
		n, _ := m.Value("__run_num__").(int)
		entries = append(entries, entry{ordered.KeyString(k), m, n})
		return true
	})
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].num < entries[j].num })
	b.WriteString(o.col(cyan, host+":") + "\n")
	var ok, changed, failed int
	var total float64
	for _, e := range entries {
		res := e.ret.Value("result")
		ch, _ := e.ret.Value("changes").(*ordered.Map)
		hasChanges := ch != nil && ch.Len() > 0
		switch {
		case res == false:
			failed++
		default:
			ok++
			if hasChanges {
				changed++
			}
		}
		if d, isF := e.ret.Value("duration").(float64); isF {
			total += d
		}
		if !o.Verbose && res == true && !hasChanges {
			continue
		}
		writeState(b, e, o)
	}
	b.WriteString("\nSummary for " + host + "\n------------\n")
	succ := fmt.Sprintf("Succeeded: %d", ok)
	if changed > 0 {
		succ += fmt.Sprintf(" (changed=%d)", changed)
	}
	b.WriteString(o.col(green, succ) + "\n")
	fcol := cyan
	if failed > 0 {
		fcol = red
	}
	b.WriteString(o.col(fcol, fmt.Sprintf("Failed:    %d", failed)) + "\n------------\n")
	fmt.Fprintf(b, "Total states run:     %d\n", len(entries))
	fmt.Fprintf(b, "Total run time: %8s ms\n", fmt.Sprintf("%.3f", total))
}

func writeState(b *strings.Builder, e entry, o Options) {
	comps := strings.SplitN(e.tag, "_|-", 4)
	for len(comps) < 4 {
		comps = append(comps, "")
	}
	res := e.ret.Value("result")
	c := green
	switch {
	case res == false:
		c = red
	case res == nil:
		c = yellow
	}
	ch, _ := e.ret.Value("changes").(*ordered.Map)
	if res == true && ch != nil && ch.Len() > 0 {
		c = green
	}
	lines := []string{
		"----------",
		fmt.Sprintf("          ID: %s", comps[1]),
		fmt.Sprintf("    Function: %s.%s", comps[0], comps[3]),
		fmt.Sprintf("      Result: %s", pyResult(res)),
		fmt.Sprintf("     Comment: %s", indentComment(ordered.KeyString(e.ret.Value("comment")))),
	}
	if comps[1] != comps[2] {
		lines = append(lines[:3], append([]string{fmt.Sprintf("        Name: %s", comps[2])}, lines[3:]...)...)
	}
	if st, ok := e.ret.Get("start_time"); ok {
		lines = append(lines, fmt.Sprintf("     Started: %s", ordered.KeyString(st)))
	}
	if d, ok := e.ret.Get("duration"); ok {
		lines = append(lines, fmt.Sprintf("    Duration: %s ms", ordered.KeyString(d)))
	}
	for _, l := range lines {
		b.WriteString(o.col(c, l) + "\n")
	}
	b.WriteString(o.col(c, "     Changes:   ") + "\n")
	if ch != nil && ch.Len() > 0 {
		b.WriteString(nested(ch, 14, o, c))
	}
}

func pyResult(v any) string { return ordered.KeyString(v) }

func indentComment(s string) string {
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", 14))
}

// nested renders changes as Salt's nested outputter does.
func nested(v any, indent int, o Options, c string) string {
	pad := strings.Repeat(" ", indent)
	var b strings.Builder
	switch x := v.(type) {
	case *ordered.Map:
		b.WriteString(o.col(c, pad+"----------") + "\n")
		keys := x.Keys()
		sort.SliceStable(keys, func(i, j int) bool { return ordered.KeyString(keys[i]) < ordered.KeyString(keys[j]) })
		for _, k := range keys {
			b.WriteString(o.col(cyan, pad+ordered.KeyString(k)+":") + "\n")
			b.WriteString(nested(x.Value(k), indent+4, o, c))
		}
	case []any:
		for _, e := range x {
			switch e.(type) {
			case *ordered.Map, []any:
				b.WriteString(o.col(c, pad+"|_") + "\n" + nested(e, indent+2, o, c))
			default:
				b.WriteString(o.col(c, pad+"- "+ordered.KeyString(e)) + "\n")
			}
		}
	default:
		for _, line := range strings.Split(ordered.KeyString(v), "\n") {
			b.WriteString(o.col(c, pad+line) + "\n")
		}
	}
	return b.String()
}
