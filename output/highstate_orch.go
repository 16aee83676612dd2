package output

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// orchestrationData is the start of salt/output/highstate.py output():
// the state data out of the envelopes it arrives in — a job's "return",
// the orchestrate runner's {"data", "outputter", "retcode"}, a
// lookup_jid answer {<id>: {"jid", "fun", "return": {"data": ...}}} —
// with the orchestrate runner's "retcode" dropped beside the one
// <id>_master host.
func orchestrationData(data any) any {
	m, ok := data.(*ordered.Map)
	if !ok {
		return data
	}
	if m.Has("return") {
		data = m.Value("return")
	}
	if d, ok := data.(*ordered.Map); ok && d.Has("data") {
		data = d.Value("data")
	}
	if d, ok := data.(*ordered.Map); ok && d.Len() == 1 {
		var inner *ordered.Map
		d.Range(func(_, v any) bool { inner, _ = v.(*ordered.Map); return false })
		if inner != nil && inner.Has("jid") && inner.Has("fun") {
			if r, ok := inner.Value("return").(*ordered.Map); ok && r.Has("data") {
				data = r.Value("data")
			}
		}
	}
	d, ok := data.(*ordered.Map)
	if !ok || !d.Has("retcode") {
		return data
	}
	masters := 0
	d.Range(func(k, _ any) bool {
		if strings.HasSuffix(ordered.KeyString(k), "_master") {
			masters++
		}
		return true
	})
	if masters == 1 {
		d = d.Copy()
		d.Delete("retcode")
	}
	return d
}

// formatStateChanges is the changes text of one state: an inner
// orchestration (a salt.runner state named state.orch, state.orchestrate
// or state.sls) as a nested highstate indented under it; a salt.state
// return ({"out": "highstate", "ret": {minion: ...}}) as each minion's
// highstate indented by 14; anything else through formatChanges
// (salt/output/highstate.py _format_host and _format_changes).
func formatStateChanges(ret *ordered.Map, opts Options, ho HighstateOptions) (bool, string) {
	changes := ret.Value("changes")
	switch ordered.KeyString(ret.Value("name")) {
	case "state.orch", "state.orchestrate", "state.sls":
		inner := ho
		inner.level++
		nested := Highstate(changes, opts, inner)
		return true, indentLines("\n"+nested, 14*(ho.level+1))
	}
	cm, ok := changes.(*ordered.Map)
	if ok && cm.Len() > 0 && cm.Value("out") == "highstate" && cm.Value("ret") != nil {
		hosts, ok := cm.Value("ret").(*ordered.Map)
		if !ok {
			return formatChanges(changes, opts)
		}
		var b strings.Builder
		changed := false
		hosts.Range(func(k, v any) bool {
			s, c := formatHost(ordered.KeyString(k), v, opts, HighstateOptions{Mode: ho.Mode, Quiet: ho.Quiet,
				NoProfile: ho.NoProfile, Exclude: ho.Exclude, TerseResults: ho.TerseResults})
			b.WriteString("\n" + indentLines(s, 14))
			changed = changed || c
			return true
		})
		return changed, b.String()
	}
	return formatChanges(changes, opts)
}

// indentLines puts n spaces before every line of s (re.sub("^", ...,
// flags=re.MULTILINE)).
func indentLines(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n")
}
