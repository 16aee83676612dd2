package coregrains

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/py"
)

// cpuData parses /proc/cpuinfo as core.py's _linux_cpudata does:
// num_cpus, cpu_model and cpu_flags, with the ARM and POWER spellings.
func cpuData(text string) map[string]any {
	num, model, flags := 0, "", []any{}
	haveModel, haveFlags := false, false
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			num++
		case "# processors":
			if n, err := strconv.Atoi(v); err == nil {
				num = n
			}
		case "vendor_id", "model name", "cpu":
			model, haveModel = v, true
		case "flags", "Features":
			flags, haveFlags = fieldsAny(v), true
		case "Processor":
			model, haveModel = strings.SplitN(v, "-", 2)[0], true
			num = 1
		}
	}
	if !haveModel {
		model = "Unknown"
	}
	if !haveFlags {
		flags = []any{}
	}
	return map[string]any{"num_cpus": num, "cpu_model": model, "cpu_flags": flags}
}

func fieldsAny(s string) []any {
	f := strings.Fields(s)
	out := make([]any, len(f))
	for i, x := range f {
		out[i] = x
	}
	return out
}

// memData parses /proc/meminfo: mem_total and swap_total in MiB, floored.
func memData(text string) map[string]any {
	g := map[string]any{"mem_total": 0, "swap_total": 0}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		switch strings.TrimSpace(k) {
		case "MemTotal":
			g["mem_total"] = n / 1024
		case "SwapTotal":
			g["swap_total"] = n / 1024
		}
	}
	return g
}

// kernelParams parses /proc/cmdline into Salt's kernelparams grain: a
// list of [name, value] pairs, value None without "=" or with several.
// A command line shlex.split cannot read (an open quote) gives no grain,
// as the exception does in salt/grains/core.py.
func kernelParams(cmdline string) []any {
	words, err := py.Split(cmdline)
	if err != nil {
		return nil
	}
	out := []any{}
	for _, item := range words {
		parts := strings.Split(item, "=")
		var val any
		if len(parts) == 2 {
			val = strings.Trim(parts[1], `"`)
		}
		out = append(out, []any{parts[0], val})
	}
	return out
}

// parseResolv is salt/utils/dns.py parse_resolv: the dns grain.
func parseResolv(text string) map[string]any {
	ns, ns4, ns6 := []any{}, []any{}, []any{}
	search, sortlist, options := []any{}, []any{}, []any{}
	domain := ""
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		dir, args := strings.ToLower(f[0]), f[1:]
		for i, a := range args {
			if a[0] == '#' || a[0] == ';' {
				args = args[:i]
				break
			}
		}
		if len(args) == 0 {
			continue
		}
		switch dir {
		case "nameserver":
			addr, err := netip.ParseAddr(args[0])
			if err != nil {
				continue
			}
			s := addr.String()
			if !seen[s] {
				seen[s] = true
				ns = append(ns, s)
				if addr.Is4() {
					ns4 = append(ns4, s)
				} else {
					ns6 = append(ns6, s)
				}
			}
		case "domain":
			domain = args[0]
		case "search":
			search = toAny(args)
		case "sortlist":
			for _, a := range args {
				if s, ok := sortlistEntry(a); ok && !containsAny(sortlist, s) {
					sortlist = append(sortlist, s)
				}
			}
		case "options":
			if !containsAny(options, args[0]) {
				options = append(options, args[0])
			}
		}
	}
	return map[string]any{
		"nameservers": ns, "ip4_nameservers": ns4, "ip6_nameservers": ns6,
		"sortlist": sortlist, "domain": domain, "search": search, "options": options,
	}
}

func v4Mask(bits int) string {
	var m [4]byte
	for i := 0; i < bits; i++ {
		m[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom4(m).String()
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// dmiGrains maps Salt's hardware grain names to /sys/class/dmi/id files
// (core.py _hw_data).
var dmiGrains = [][2]string{
	{"biosversion", "bios_version"},
	{"biosvendor", "bios_vendor"},
	{"boardname", "board_name"},
	{"productname", "product_name"},
	{"manufacturer", "sys_vendor"},
	{"biosreleasedate", "bios_date"},
	{"uuid", "product_uuid"},
	{"serialnumber", "product_serial"},
}

// sortlistEntry parses addr[/mask] (mask dotted or a length) into
// Python's ip_network(...).with_netmask; without a mask the classful
// netmask applies (salt.utils.network.natural_ipv4_netmask). Networks
// with host bits set are rejected, as ip_network(strict=True) does.
func sortlistEntry(a string) (string, bool) {
	addrText, maskText, hasMask := strings.Cut(a, "/")
	addr, err := netip.ParseAddr(addrText)
	if err != nil || !addr.Is4() {
		return "", false
	}
	bits := 8
	switch b := addr.As4()[0]; {
	case b >= 192:
		bits = 24
	case b >= 128:
		bits = 16
	}
	if hasMask {
		if n, err := strconv.Atoi(maskText); err == nil {
			bits = n
		} else if m, err := netip.ParseAddr(maskText); err == nil && m.Is4() {
			bits = 0
			for _, x := range m.As4() {
				for i := 7; i >= 0; i-- {
					if x&(1<<i) != 0 {
						bits++
					}
				}
			}
		} else {
			return "", false
		}
	}
	p, err := addr.Prefix(bits)
	if err != nil || (hasMask && p.Addr() != addr) {
		return "", false
	}
	return p.Addr().String() + "/" + v4Mask(bits), true
}
