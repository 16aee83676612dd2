package network

import (
	"context"
	"net"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// interfaces returns Salt's interface map (salt/utils/network.py
// linux_interfaces): from `ip addr show` when ip(8) exists, as Salt does,
// else from the Go runtime's view of the interfaces.
func interfaces(ctx context.Context) *ordered.Map {
	if ip, err := exec.LookPath("ip"); err == nil {
		if out, err := exec.CommandContext(ctx, ip, "addr", "show").Output(); err == nil {
			return parseIPAddr(string(out))
		}
	}
	return nativeInterfaces()
}

var (
	groupSplit = regexp.MustCompile(`\r?\n\d`)
	ifHeader   = regexp.MustCompile(`^\d*:\s+([\w.\-]+)(?:@)?([\w.\-]+)?:\s+<(.+)>`)
)

// parseIPAddr reads `ip addr show` output into {iface: {up, parent?,
// hwaddr, inet: [{address, netmask, broadcast, label}], inet6: [{address,
// prefixlen, scope}], secondary: [...]}}, following _interfaces_ip.
func parseIPAddr(out string) *ordered.Map {
	ret := ordered.New()
	for _, group := range groupSplit.Split(out, -1) {
		iface, data := "", ordered.New()
		for _, line := range strings.Split(group, "\n") {
			if !strings.Contains(line, " ") {
				continue
			}
			if m := ifHeader.FindStringSubmatch(line); m != nil {
				iface = m[1]
				data.Set("up", contains(strings.Split(m[3], ","), "UP"))
				if m[2] != "" {
					data.Set("parent", m[2])
				}
				continue
			}
			addAddrLine(data, strings.Fields(line))
		}
		if iface != "" {
			ret.Set(iface, data)
		}
	}
	return ret
}

func addAddrLine(data *ordered.Map, cols []string) {
	if len(cols) < 2 {
		return
	}
	typ, value := cols[0], cols[1]
	if strings.HasPrefix(typ, "link") {
		data.Set("hwaddr", value)
		return
	}
	if typ != "inet" && typ != "inet6" {
		return
	}
	ip, cidr, hasCIDR := strings.Cut(value, "/")
	addr := ordered.New()
	secondary := contains(cols, "secondary")
	if secondary {
		addr.Set("type", typ)
	}
	addr.Set("address", ip)
	if typ == "inet" {
		var mask any = cidrToNetmask(32)
		if hasCIDR {
			n, err := strconv.Atoi(cidr)
			mask = cidrToNetmask(n)
			if err != nil {
				mask = ""
			}
		}
		addr.Set("netmask", mask)
		addr.Set("broadcast", after(cols, "brd"))
		addr.Set("label", cols[len(cols)-1])
	} else {
		var plen any = 32
		if hasCIDR {
			plen = cidr
		}
		addr.Set("prefixlen", plen)
		addr.Set("scope", after(cols, "scope"))
	}
	key := typ
	if secondary {
		key = "secondary"
	}
	list, _ := data.Value(key).([]any)
	data.Set(key, append(list, addr))
}

func after(cols []string, word string) any {
	for i, c := range cols {
		if c == word && i+1 < len(cols) {
			return cols[i+1]
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cidrToNetmask is cidr_to_ipv4_netmask: "" for a prefix outside 1..32.
func cidrToNetmask(bits int) string {
	if bits < 1 || bits > 32 {
		return ""
	}
	m := net.CIDRMask(bits, 32)
	return net.IP(m).String()
}

func nativeInterfaces() *ordered.Map {
	ret := ordered.New()
	ifs, err := net.Interfaces()
	if err != nil {
		return ret
	}
	for _, it := range ifs {
		data := ordered.FromPairs("up", it.Flags&net.FlagUp != 0)
		hw := it.HardwareAddr.String()
		if hw == "" && it.Flags&net.FlagLoopback != 0 {
			hw = "00:00:00:00:00:00"
		}
		if hw != "" {
			data.Set("hwaddr", hw)
		}
		addrs, _ := it.Addrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ones, _ := ipn.Mask.Size()
			if ip4 := ipn.IP.To4(); ip4 != nil {
				cols := []string{"inet", ip4.String() + "/" + strconv.Itoa(ones)}
				if it.Flags&net.FlagBroadcast != 0 && ones < 31 {
					cols = append(cols, "brd", broadcast(ip4, ipn.Mask))
				}
				addAddrLine(data, append(cols, "scope", "global", it.Name))
				continue
			}
			addAddrLine(data, []string{"inet6", ipn.IP.String() + "/" + strconv.Itoa(ones), "scope", scope6(ipn.IP)})
		}
		ret.Set(it.Name, data)
	}
	return ret
}

func broadcast(ip net.IP, mask net.IPMask) string {
	b := make(net.IP, 4)
	for i := range b {
		b[i] = ip[i] | ^mask[len(mask)-4+i]
	}
	return b.String()
}

func scope6(ip net.IP) string {
	a, _ := netip.AddrFromSlice(ip)
	switch {
	case a.IsLoopback():
		return "host"
	case a.IsLinkLocalUnicast():
		return "link"
	}
	return "global"
}

// addrEntries lists the address dicts of proto ("inet" or "inet6") of
// the interfaces, secondaries of that type included (_get_ips).
func addrEntries(ifaces *ordered.Map, proto string) []*ordered.Map {
	var out []*ordered.Map
	ifaces.Range(func(_, v any) bool {
		data, _ := v.(*ordered.Map)
		for _, key := range []string{proto, "secondary"} {
			list, _ := data.Value(key).([]any)
			for _, a := range list {
				m, ok := a.(*ordered.Map)
				if !ok || (key == "secondary" && m.Value("type") != proto) {
					continue
				}
				out = append(out, m)
			}
		}
		return true
	})
	return out
}
