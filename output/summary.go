package output

import (
	"fmt"
	"io"
	"strings"
)

// ReturnsSummary is what salt/cli/salt.py _print_returns_summary counts
// and names.
type ReturnsSummary struct {
	Targeted, Returned int
	// NotConnected and NotResponding are the targets that did not return
	// (unreachable, or silent); Failed returned with a non-zero retcode.
	NotConnected, NotResponding, Failed []string
	// Names prints the lists of IDs (Salt does so with -v only).
	Names bool
}

// WriteReturnsSummary prints s as Salt's `salt --summary` does.
func WriteReturnsSummary(w io.Writer, s ReturnsSummary) error {
	rule := "-------------------------------------------\n"
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n%sSummary\n%s", rule, rule)
	fmt.Fprintf(&b, "# of minions targeted: %d\n# of minions returned: %d\n", s.Targeted, s.Returned)
	fmt.Fprintf(&b, "# of minions that did not return: %d\n# of minions with errors: %d\n",
		len(s.NotConnected)+len(s.NotResponding), len(s.Failed))
	if s.Names {
		for _, l := range []struct {
			label string
			ids   []string
		}{{"Minions not connected", s.NotConnected}, {"Minions not responding", s.NotResponding}, {"Minions with failures", s.Failed}} {
			if len(l.ids) > 0 {
				fmt.Fprintf(&b, "%s: %s\n", l.label, strings.Join(l.ids, " "))
			}
		}
	}
	b.WriteString(rule)
	_, err := io.WriteString(w, b.String())
	return err
}
