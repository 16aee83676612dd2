package output

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

func init() { Register("highstate", highstateFunc) }

// HighstateOptions are the minion options the highstate outputter reads
// (state_verbose, state_output, state_output_profile); the zero value is
// Salt's default: verbose, full output, with timing.
type HighstateOptions struct {
	// Mode is state_output (--state-output): full (""), terse, mixed,
	// changes or filter, each optionally with "_id" to show IDs in place
	// of names.
	Mode      string
	Quiet     bool // state_verbose: False (hide unchanged successes)
	NoProfile bool // state_output_profile: False
	// Exclude and TerseResults are state_output_exclude and
	// state_output_terse for the filter mode: results ("True", "False",
	// "None") to leave out or to print tersely.
	Exclude, TerseResults []string
	// level is the nesting depth of an orchestration's inner highstate
	// (indent_level - 1 in salt/output/highstate.py).
	level int
}

// ParseHighstateOptions reads the options the highstate outputter uses
// from a minion or master config, with --state-output and
// --state-verbose (when not empty) winning.
func ParseHighstateOptions(opts *ordered.Map, stateOutput, stateVerbose string) HighstateOptions {
	var ho HighstateOptions
	if v, ok := opts.Value("state_output").(string); ok {
		ho.Mode = v
	}
	if stateOutput != "" {
		ho.Mode = stateOutput
	}
	ho.Mode = strings.ToLower(ho.Mode)
	verbose := opts.Value("state_verbose")
	if stateVerbose != "" {
		// OutputOptionsMixIn.process_state_verbose turns only
		// True/true/False/false into booleans; any other string stays a
		// string, which highstate.py's "not state_verbose" treats as true.
		verbose = stateVerbose != "False" && stateVerbose != "false"
	}
	if b, ok := verbose.(bool); ok && !b {
		ho.Quiet = true
	}
	if b, ok := opts.Value("state_output_profile").(bool); ok && !b {
		ho.NoProfile = true
	}
	list := func(v any) []string {
		switch x := v.(type) {
		case string:
			return strings.Split(x, ",")
		case []any:
			out := make([]string, len(x))
			for i, e := range x {
				out[i] = ordered.KeyString(e)
			}
			return out
		}
		return nil
	}
	ho.Exclude = list(opts.Value("state_output_exclude"))
	ho.TerseResults = list(opts.Value("state_output_terse"))
	return ho
}

func highstateFunc(data any, opts Options) (string, error) {
	return Highstate(data, opts, opts.Highstate), nil
}

// terseFor reports whether a state prints on one line in this mode
// (salt/output/highstate.py _format_host).
func (ho HighstateOptions) terseFor(result any, changed bool) bool {
	switch {
	case strings.HasPrefix(ho.Mode, "terse"):
		return true
	case strings.HasPrefix(ho.Mode, "mixed"):
		return result != false
	case strings.HasPrefix(ho.Mode, "changes"):
		return result == true && !changed
	case strings.HasPrefix(ho.Mode, "filter"):
		return slices.Contains(ho.TerseResults, py.Str(result))
	}
	return false
}

// excluded reports whether the filter mode leaves a state out.
func (ho HighstateOptions) excluded(result any) bool {
	return strings.HasPrefix(ho.Mode, "filter") && slices.Contains(ho.Exclude, py.Str(result))
}

// terseLine is _format_terse without tabular output.
func terseLine(tcolor string, comps []string, ret *ordered.Map, ho HighstateOptions, c Palette) string {
	result := "Clean"
	if changed, _ := formatChanges(ret.Value("changes"), Options{}); changed {
		result = "Changed"
	}
	switch ret.Value("result") {
	case false:
		result = "Failed"
	case nil:
		result = "Differs"
	}
	var b strings.Builder
	if w, ok := ret.Value("warnings").([]any); ok && len(w) > 0 {
		var ws []string
		for _, x := range w {
			ws = append(ws, py.Str(x))
		}
		b.WriteString(c.LightRed + "Warnings:\n" + strings.Join(ws, "\n") + c.EndC)
	}
	fmt.Fprintf(&b, " %s Name: %s - Function: %s.%s - Result: %s", tcolor, comps[2], comps[0], comps[3], result)
	if !ho.NoProfile && ret.Has("start_time") {
		fmt.Fprintf(&b, " - Started: %s - Duration: %s ms", py.Str(ret.Value("start_time")), py.Str(ret.Value("duration")))
	}
	return b.String() + c.EndC
}

// Highstate renders state returns as salt/output/highstate.py does: for
// each minion a block per state in __run_num__ order with ID, Function,
// Name, Result, Comment, Started, Duration and the changes through the
// nested outputter, then the summary. Error lists print as "Data failed
// to compile", strings and numbers as they are.
func Highstate(data any, opts Options, ho HighstateOptions) string {
	m, ok := orchestrationData(data).(*ordered.Map)
	if !ok {
		return Nested(data, opts)
	}
	var parts []string
	m.Range(func(k, v any) bool {
		s, _ := formatHost(ordered.KeyString(k), v, opts, ho)
		parts = append(parts, s)
		return true
	})
	return strings.Join(parts, "\n")
}

type hsEntry struct {
	tag string
	ret *ordered.Map
	num int
}

func formatHost(host string, data any, opts Options, ho HighstateOptions) (string, bool) {
	c := Colors(opts.Color)
	hcolor := c.Green
	var lines []string
	changed := false
	switch x := data.(type) {
	case int, string:
		changed = true
		for _, l := range strings.Split(ordered.KeyString(x), "\n") {
			lines = append(lines, hcolor+"    "+l+c.EndC)
		}
		hcolor = c.Cyan
	case []any:
		hcolor = c.LightRed
		lines = append(lines, "    "+hcolor+"Data failed to compile:"+c.EndC)
		for _, e := range x {
			lines = append(lines, hcolor+"----------\n    "+ordered.KeyString(e)+c.EndC)
		}
	case *ordered.Map:
		var body []string
		hcolor, body, changed = formatRuns(host, x, opts, ho, c)
		lines = append(lines, body...)
	}
	return strings.Join(append([]string{hcolor + host + ":" + c.EndC}, lines...), "\n"), changed
}

func formatRuns(host string, data *ordered.Map, opts Options, ho HighstateOptions, c Palette) (string, []string, bool) {
	hcolor := c.Green
	var entries []hsEntry
	data.Range(func(k, v any) bool {
		if m, ok := v.(*ordered.Map); ok && m.Has("result") {
			n, _ := m.Value("__run_num__").(int)
			entries = append(entries, hsEntry{ordered.KeyString(k), m, n})
		}
		return true
	})
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].num < entries[j].num })
	counts := map[string]int{}
	var lines []string
	nchanges := 0
	// Parallel states overlap: the total adds only the longest of them
	// to the sum of the others (salt/output/highstate.py pdurations).
	var total, maxParallel float64
	for _, e := range entries {
		res := e.ret.Value("result")
		counts[ordered.KeyString(res)]++
		d, _ := e.ret.Value("duration").(float64)
		if n, ok := e.ret.Value("duration").(int); ok {
			d = float64(n)
		}
		if e.ret.Has("__parallel__") {
			maxParallel = max(maxParallel, d)
		} else {
			total += d
		}
		changed, ctext := formatStateChanges(e.ret, opts, ho)
		if changed {
			nchanges++
		}
		if ho.Quiet && res == true && !changed {
			continue
		}
		tcolor := c.Green
		if changed {
			tcolor = c.Cyan
		}
		switch res {
		case false:
			hcolor, tcolor = c.Red, c.Red
		case nil:
			hcolor, tcolor = c.LightYellow, c.LightYellow
		}
		comps := strings.SplitN(e.tag, "_|-", 4)
		for len(comps) < 4 {
			comps = append(comps, "")
		}
		if strings.HasSuffix(ho.Mode, "_id") {
			comps[2] = comps[1] // the ID in place of the name (Salt #35137)
		}
		if ho.excluded(res) {
			continue
		}
		if ho.terseFor(res, changed) {
			lines = append(lines, terseLine(tcolor, comps, e.ret, ho, c))
			continue
		}
		lines = append(lines, stateLines(e, comps, tcolor, ctext, ho, c)...)
	}
	return hcolor, append(lines, summary(host, counts, nchanges, total+maxParallel, ho, c)...), nchanges > 0
}

func stateLines(e hsEntry, comps []string, tcolor, ctext string, ho HighstateOptions, c Palette) []string {
	comment := ordered.KeyString(e.ret.Value("comment"))
	if l, ok := e.ret.Value("comment").([]any); ok {
		var s []string
		for _, x := range l {
			s = append(s, ordered.KeyString(x))
		}
		comment = strings.Join(s, " ")
	}
	comment = strings.ReplaceAll(strings.TrimSpace(comment), "\n", "\n"+strings.Repeat(" ", 14))
	out := []string{
		tcolor + "----------" + c.EndC,
		"    " + tcolor + "      ID: " + comps[1] + c.EndC,
		"    " + tcolor + "Function: " + comps[0] + "." + comps[3] + c.EndC,
	}
	if comps[1] != comps[2] {
		out = append(out, "    "+tcolor+"    Name: "+comps[2]+c.EndC)
	}
	out = append(out,
		"    "+tcolor+"  Result: "+py.Str(e.ret.Value("result"))+c.EndC,
		"    "+tcolor+" Comment: "+comment+c.EndC)
	if !ho.NoProfile && e.ret.Has("start_time") {
		out = append(out,
			"    "+tcolor+" Started: "+py.Str(e.ret.Value("start_time"))+c.EndC,
			"    "+tcolor+"Duration: "+py.Str(e.ret.Value("duration"))+" ms"+c.EndC)
	}
	out = append(out, tcolor+"     Changes:   "+ctext+c.EndC)
	if w, ok := e.ret.Value("warnings").([]any); ok && len(w) > 0 {
		var ws []string
		for _, x := range w {
			ws = append(ws, ordered.KeyString(x))
		}
		out = append(out, "   "+c.LightRed+" Warnings: "+strings.Join(ws, "\n"+strings.Repeat(" ", 14))+c.EndC)
	}
	return out
}

// formatChanges renders changes with the nested outputter at indent 14.
func formatChanges(v any, opts Options) (bool, string) {
	switch x := v.(type) {
	case nil:
		return false, ""
	case *ordered.Map:
		if x.Len() == 0 {
			return false, ""
		}
		o := opts
		o.NestedIndent = 14
		return true, "\n" + Nested(x, o)
	case string:
		if x == "" {
			return false, ""
		}
	case []any:
		if len(x) == 0 {
			return false, ""
		}
	}
	return true, "Invalid Changes data: " + ordered.KeyString(v)
}

func summary(host string, counts map[string]int, nchanges int, total float64, ho HighstateOptions, c Palette) []string {
	labels := []string{"Succeeded", "Failed", "Not Run", "Warnings"}
	countMax := 0
	for _, n := range counts {
		countMax = max(countMax, len(strconv.Itoa(n)))
	}
	labelMax := 0
	for _, l := range labels {
		labelMax = max(labelMax, len(l))
	}
	width := labelMax + countMax + 2
	cnt := func(label string, n int) string {
		return fmt.Sprintf("%s: %*d", label, width-(len(label)+2), n)
	}
	out := []string{c.Cyan + "\nSummary for " + host + "\n" + strings.Repeat("-", width) + c.EndC}
	var stats []string
	if counts["None"] > 0 {
		stats = append(stats, c.LightYellow+fmt.Sprintf("unchanged=%d", counts["None"])+c.EndC)
	}
	if nchanges > 0 {
		stats = append(stats, c.Green+fmt.Sprintf("changed=%d", nchanges)+c.EndC)
	}
	st := ""
	if len(stats) > 0 {
		st = " (" + strings.Join(stats, ", ") + ")"
	}
	out = append(out, c.Green+cnt("Succeeded", counts["True"]+counts["None"])+c.EndC+st)
	fcol := c.Cyan
	if counts["False"] > 0 {
		fcol = c.Red
	}
	out = append(out, fcol+cnt("Failed", counts["False"])+c.EndC)
	runs := counts["True"] + counts["None"] + counts["False"]
	out = append(out, c.Cyan+strings.Repeat("-", width)+"\n"+fmt.Sprintf("Total states run: %*d", width-7, runs)+c.EndC)
	if !ho.NoProfile {
		unit := "ms"
		if total > 999 {
			total /= 1000
			unit = "s"
		}
		out = append(out, c.Cyan+fmt.Sprintf("Total run time: %*s %s", width-5, fmt.Sprintf("%.3f", total), unit)+c.EndC)
	}
	return out
}
