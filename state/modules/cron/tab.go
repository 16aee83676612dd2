package cron

import (
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// Tag is the line above which Salt leaves a crontab alone.
const Tag = "# Lines below here are managed by Salt, do not edit\n"

const (
	idMarker = "SALT_CRON_IDENTIFIER"
	noID     = "NO ID SET"
)

// Tab is a parsed crontab: the unmanaged lines above Tag, then the
// managed environment settings, jobs and @special jobs. Entries are
// dicts in Salt's shapes so that list_tab can return them as they are.
type Tab struct {
	Pre     []string
	Crons   []*ordered.Map
	Special []*ordered.Map
	Env     []*ordered.Map
}

// Value is Tab as list_tab returns it: {pre, crons, special, env}.
func (t *Tab) Value() *ordered.Map {
	pre := []any{}
	for _, p := range t.Pre {
		pre = append(pre, p)
	}
	return ordered.FromPairs("pre", pre, "crons", maps(t.Crons), "special", maps(t.Special), "env", maps(t.Env))
}

func maps(l []*ordered.Map) []any {
	out := []any{}
	for _, m := range l {
		out = append(out, m)
	}
	return out
}

// Parse reads crontab text as Salt's list_tab. Lines are split on
// single spaces, as Salt does, so runs of spaces make empty fields.
func Parse(data string) *Tab {
	t := &Tab{}
	managed := false
	var comment, identifier any
	for _, line := range splitLines(data) {
		if line == strings.TrimSuffix(Tag, "\n") {
			managed = true
			continue
		}
		if !managed {
			t.Pre = append(t.Pre, line)
			continue
		}
		commented := false
		if rest, ok := strings.CutPrefix(line, "#DISABLED#"); ok {
			line, commented = rest, true
		}
		switch {
		case strings.HasPrefix(line, "@"):
			comps := strings.Fields(line)
			if len(comps) < 2 {
				continue
			}
			t.Special = append(t.Special, ordered.FromPairs("spec", comps[0], "cmd", strings.Join(comps[1:], " "),
				"identifier", identifier, "comment", comment, "commented", commented))
			identifier, comment = nil, nil
		case strings.HasPrefix(line, "#"):
			c := strings.TrimLeft(line, "# ")
			if strings.Contains(c, idMarker) {
				parts := strings.Split(c, idMarker)
				c = strings.TrimRight(parts[0], " \t\r\n\v\f")
				if len(parts[1]) > 1 {
					identifier = parts[1][1:]
				}
			}
			if comment == nil {
				comment = c
			} else {
				comment = comment.(string) + "\n" + c
			}
		case isEnvLine(line):
			name, value, _ := strings.Cut(line, "=")
			t.Env = append(t.Env, ordered.FromPairs("name", name, "value", value))
		case len(strings.Split(line, " ")) > 5:
			comps := strings.Split(line, " ")
			t.Crons = append(t.Crons, ordered.FromPairs("minute", comps[0], "hour", comps[1], "daymonth", comps[2],
				"month", comps[3], "dayweek", comps[4], "identifier", identifier, "cmd", strings.Join(comps[5:], " "),
				"comment", comment, "commented", commented))
			identifier, comment = nil, nil
		}
	}
	return t
}

// splitLines is Python's str.splitlines for the line breaks crontab
// text holds.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func isEnvLine(line string) bool {
	eq := strings.Index(line, "=")
	if eq <= 0 {
		return false
	}
	sp := strings.Index(line, " ")
	return sp < 0 || eq < sp
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return ordered.KeyString(v)
}

func commentBlock(m *ordered.Map, rstrip bool) string {
	comment, ident := m.Value("comment"), m.Value("identifier")
	if comment == nil && ident == nil {
		return ""
	}
	out := "#"
	if c := str(comment); c != "" {
		if rstrip {
			c = strings.TrimRight(c, " \t\r\n\v\f")
		}
		out += " " + strings.ReplaceAll(c, "\n", "\n# ")
	}
	if id := str(ident); id != "" {
		out += " " + idMarker + ":" + id
	}
	return out + "\n"
}

func disabled(m *ordered.Map) string {
	if m.Value("commented") == true {
		return "#DISABLED#"
	}
	return ""
}

// Render writes Tab back as Salt's _render_tab: the unmanaged lines,
// Tag, the environment, the jobs, then the special jobs.
func (t *Tab) Render() string {
	var b strings.Builder
	for _, p := range t.Pre {
		b.WriteString(p + "\n")
	}
	if len(t.Pre) == 0 || t.Pre[len(t.Pre)-1]+"\n" != Tag {
		b.WriteString(Tag)
	}
	for _, e := range t.Env {
		v := e.Value("value")
		if v == nil || v == "" {
			fmt.Fprintf(&b, "%s=\"\"\n", str(e.Value("name")))
		} else {
			fmt.Fprintf(&b, "%s=%s\n", str(e.Value("name")), str(v))
		}
	}
	for _, c := range t.Crons {
		b.WriteString(commentBlock(c, false))
		fmt.Fprintf(&b, "%s%s %s %s %s %s %s\n", disabled(c), str(c.Value("minute")), str(c.Value("hour")),
			str(c.Value("daymonth")), str(c.Value("month")), str(c.Value("dayweek")), str(c.Value("cmd")))
	}
	for _, c := range t.Special {
		b.WriteString(commentBlock(c, true))
		fmt.Fprintf(&b, "%s%s %s\n", disabled(c), str(c.Value("spec")), str(c.Value("cmd")))
	}
	return b.String()
}
