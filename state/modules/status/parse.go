package status

import (
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// Parsers of /proc text. Lines too short for their format are skipped
// where Salt would raise IndexError.

func lines(text string) [][]string {
	var out [][]string
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

func parseMeminfo(text string) *ordered.Map {
	ret := ordered.New()
	for _, f := range lines(text) {
		if len(f) < 2 {
			continue
		}
		e := ordered.FromPairs("value", f[1])
		if len(f) > 2 {
			e.Set("unit", f[2])
		}
		ret.Set(strings.ReplaceAll(f[0], ":", ""), e)
	}
	return ret
}

func parseCPUInfo(text string) *ordered.Map {
	ret := ordered.New()
	for _, l := range strings.Split(text, "\n") {
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		// Python's split(":") keeps only the text up to a second colon.
		v, _, _ = strings.Cut(v, ":")
		k = strings.TrimSpace(k)
		if k == "flags" {
			ret.Set(k, fieldsAny(v))
		} else {
			ret.Set(k, strings.TrimSpace(v))
		}
	}
	return ret
}

func fieldsAny(s string) []any {
	out := []any{}
	for _, f := range strings.Fields(s) {
		out = append(out, f)
	}
	return out
}

func numbers(f []string) []any {
	out := []any{}
	for _, x := range f {
		out = append(out, number(x))
	}
	return out
}

func parseCPUStats(text string) *ordered.Map {
	ret := ordered.New()
	for _, f := range lines(text) {
		switch {
		case f[0] == "cpu" && len(f) >= 9:
			ret.Set("cpu", ordered.FromPairs(
				"idle", number(f[4]), "iowait", number(f[5]), "irq", number(f[6]), "nice", number(f[2]),
				"softirq", number(f[7]), "steal", number(f[8]), "system", number(f[3]), "user", number(f[1])))
		case (f[0] == "intr" || f[0] == "softirq") && len(f) >= 2:
			list := "irqs"
			if f[0] == "softirq" {
				list = "softirqs"
			}
			ret.Set(f[0], ordered.FromPairs("total", number(f[1]), list, numbers(f[2:])))
		case f[0] != "cpu" && len(f) >= 2:
			ret.Set(f[0], number(f[1]))
		}
	}
	return ret
}

var diskstatFields = []string{"major", "minor", "device", "reads_issued", "reads_merged", "sectors_read",
	"ms_spent_reading", "writes_completed", "writes_merged", "sectors_written", "ms_spent_writing",
	"io_in_progress", "ms_spent_in_io", "weighted_ms_spent_in_io"}

func parseDiskstats(text string) *ordered.Map {
	ret := ordered.New()
	for _, f := range lines(text) {
		if len(f) < len(diskstatFields) {
			continue
		}
		e := ordered.New()
		for i, name := range diskstatFields {
			e.Set(name, number(f[i]))
		}
		ret.Set(f[2], e)
	}
	return ret
}

func parseVMStat(text string) *ordered.Map {
	ret := ordered.New()
	for _, f := range lines(text) {
		if len(f) >= 2 {
			ret.Set(f[0], number(f[1]))
		}
	}
	return ret
}

// netdevFields names the columns after the interface name, in
// /proc/net/dev order; the map keys are then set in Salt's order.
var netdevFields = []string{"rx_bytes", "rx_packets", "rx_errs", "rx_drop", "rx_fifo", "rx_frame",
	"rx_compressed", "rx_multicast", "tx_bytes", "tx_packets", "tx_errs", "tx_drop", "tx_fifo",
	"tx_colls", "tx_carrier", "tx_compressed"}

var netdevOrder = []string{"rx_bytes", "rx_compressed", "rx_drop", "rx_errs", "rx_fifo", "rx_frame",
	"rx_multicast", "rx_packets", "tx_bytes", "tx_carrier", "tx_colls", "tx_compressed", "tx_drop",
	"tx_errs", "tx_fifo", "tx_packets"}

func parseNetdev(text string) *ordered.Map {
	ret := ordered.New()
	for _, l := range strings.Split(text, "\n") {
		name, rest, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		f := strings.Fields(rest)
		if name == "" || len(f) < len(netdevFields) {
			continue
		}
		vals := map[string]any{}
		for i, k := range netdevFields {
			vals[k] = number(f[i])
		}
		e := ordered.FromPairs("iface", name)
		for _, k := range netdevOrder {
			e.Set(k, vals[k])
		}
		ret.Set(name, e)
	}
	return ret
}

// parseNetstats pairs each header line with the value line that repeats
// its first word. Salt's loop stops one column short, so the last
// counter of each group is absent; that is kept.
func parseNetstats(text string) *ordered.Map {
	ret := ordered.New()
	headers := []string{""}
	for _, f := range lines(text) {
		if f[0] != headers[0] {
			headers = f
			continue
		}
		row := ordered.New()
		for i := 1; i < len(headers)-1 && i < len(f); i++ {
			row.Set(headers[i], number(f[i]))
		}
		ret.Set(strings.ReplaceAll(headers[0], ":", ""), row)
	}
	return ret
}

// parsePs reads ps output with a header naming USER/UID, PID and
// COMMAND/CMD columns.
func parsePs(out string) *ordered.Map {
	ret := ordered.New()
	ls := strings.Split(out, "\n")
	if len(ls) == 0 {
		return ret
	}
	guide := strings.Fields(ls[0])
	uind, pind, cind := index(guide, "USER", "UID"), index(guide, "PID"), index(guide, "COMMAND", "CMD")
	for _, l := range ls[1:] {
		f := strings.Fields(l)
		if len(f) <= max(uind, pind, cind) {
			continue
		}
		ret.Set(f[pind], ordered.FromPairs("user", f[uind], "cmd", strings.Join(f[cind:], " ")))
	}
	return ret
}

func index(list []string, names ...string) int {
	for _, n := range names {
		for i, s := range list {
			if s == n {
				return i
			}
		}
	}
	return 0
}

func matchPids(out string, re *regexp.Regexp, self string) string {
	var pids []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, self) || !re.MatchString(l) {
			continue
		}
		if f := strings.Fields(l); len(f) > 1 {
			pids = append(pids, f[1])
		}
	}
	return strings.Join(pids, "\n")
}

func parseW(out string) []any {
	ret := []any{}
	for _, f := range lines(out) {
		if len(f) < 6 {
			continue
		}
		ret = append(ret, ordered.FromPairs("idle", f[3], "jcpu", f[4], "login", f[2], "pcpu", f[5],
			"tty", f[1], "user", f[0], "what", strings.Join(f[6:], " ")))
	}
	return ret
}

// parseMounts lists (mountpoint, fstype) of /proc/mounts.
func parseMounts(text string) [][2]string {
	var out [][2]string
	for _, f := range lines(text) {
		if len(f) >= 3 {
			out = append(out, [2]string{unescapeMount(f[1]), f[2]})
		}
	}
	return out
}

// unescapeMount undoes the kernel's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1:i+4]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return len(s) == 3 && s[0] <= '3'
}
