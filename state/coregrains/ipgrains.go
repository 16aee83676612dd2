package coregrains

import (
	"fmt"
	"net/netip"
	"sort"
)

// ifaFSecondary is IFA_F_SECONDARY of linux/if_addr.h: an IPv4 address
// added to a subnet that already has a primary one, which iproute2
// prints as "secondary". On IPv6 the same bit is IFA_F_TEMPORARY, which
// iproute2 prints as "temporary".
const ifaFSecondary = 0x01

// ifAddr is one address of an interface with its RTM_NEWADDR flags.
type ifAddr struct {
	ip    netip.Addr
	flags uint32
}

// iface is one interface as Salt's salt.utils.network._interfaces_ip
// files it from `ip addr show`: primary IPv4 addresses in inet, IPv6
// addresses in inet6, and the lines that say "secondary" (IPv4 only,
// see ifaFSecondary) in secondary, each list in the kernel's order.
type iface struct {
	name                   string
	hwaddr                 string
	inet, inet6, secondary []netip.Addr
}

// add files one address as _interfaces_ip does. The family comes from
// the address form: an IPv4-mapped IPv6 address stays IPv6, as
// iproute2 prints it on an inet6 line.
func (f *iface) add(a ifAddr) {
	switch {
	case a.ip.Is4() && a.flags&ifaFSecondary != 0:
		f.secondary = append(f.secondary, a.ip)
	case a.ip.Is4():
		f.inet = append(f.inet, a.ip)
	default:
		f.inet6 = append(f.inet6, a.ip)
	}
}

// ipGrains builds ip_interfaces, ip4_interfaces, ip6_interfaces,
// hwaddr_interfaces, ipv4 and ipv6 from the interface table, as
// salt/grains/core.py and salt/utils/network.py (v3006) do:
//   - ip_interfaces lists inet, then inet6, then secondary addresses,
//     so an interface's secondary IPv4 addresses come after its IPv6
//     ones; ip4_interfaces is inet then secondary; ip6_interfaces is
//     inet6. These are iproute2's strings, unsorted.
//   - ipv4 and ipv6 are ip_addrs/ip_addrs6(include_loopback=True):
//     a set of ipaddress objects, sorted numerically (10.77.0.1 before
//     10.250.0.1 before 127.0.0.1), printed with Python's str.
func ipGrains(ifs []iface) map[string]any {
	ipI, ip4I, ip6I, hw := map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{}
	var v4, v6 []netip.Addr
	for _, f := range ifs {
		ip4I[f.name] = ntopAll(f.inet, f.secondary)
		ip6I[f.name] = ntopAll(f.inet6)
		ipI[f.name] = ntopAll(f.inet, f.inet6, f.secondary)
		if f.hwaddr != "" {
			hw[f.name] = f.hwaddr
		}
		v4 = append(append(v4, f.inet...), f.secondary...)
		v6 = append(v6, f.inet6...)
	}
	return map[string]any{
		"ip_interfaces": ipI, "ip4_interfaces": ip4I, "ip6_interfaces": ip6I, "hwaddr_interfaces": hw,
		"ipv4": pySortedAddrs(v4), "ipv6": pySortedAddrs(v6),
	}
}

func ntopAll(lists ...[]netip.Addr) []any {
	out := []any{}
	for _, l := range lists {
		for _, a := range l {
			out = append(out, ntop(a))
		}
	}
	return out
}

// ntop formats a as glibc's inet_ntop does, which is what iproute2
// prints and so what Salt's *_interfaces grains hold: like netip's
// String, except that an IPv4-compatible address (::a.b.c.d, the top
// 96 bits zero and the address not ::w) keeps its dotted quad.
func ntop(a netip.Addr) string {
	if a.Is6() && a.Zone() == "" {
		b := a.As16()
		if [12]byte(b[:12]) == [12]byte{} && (b[12] != 0 || b[13] != 0) {
			return "::" + netip.AddrFrom4([4]byte(b[12:])).String()
		}
	}
	return a.String()
}

// ipaddressStr formats a as Python's str(ipaddress.ip_address(...)) does in
// the Python 3.10 of Salt 3006's onedir: RFC 5952 like netip's String,
// except that an IPv4-mapped address is hex too (::ffff:a01:101, not
// ::ffff:10.1.1.1).
func ipaddressStr(a netip.Addr) string {
	if a.Is4In6() && a.Zone() == "" {
		b := a.As16()
		return fmt.Sprintf("::ffff:%x:%x", uint16(b[12])<<8|uint16(b[13]), uint16(b[14])<<8|uint16(b[15]))
	}
	return a.String()
}

// pySortedAddrs is Salt's [str(a) for a in sorted(set(addrs))]: unique,
// in numeric order.
func pySortedAddrs(a []netip.Addr) []any {
	a = append([]netip.Addr(nil), a...)
	sort.Slice(a, func(i, j int) bool { return a[i].Less(a[j]) })
	out := []any{}
	for i, x := range a {
		if i > 0 && x == a[i-1] {
			continue
		}
		out = append(out, ipaddressStr(x))
	}
	return out
}
