package network

import (
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/grains"
)

// splitInput is salt.utils.args.split_input: a list as is, a string
// split on commas.
func splitInput(v any) []string {
	var out []string
	switch x := v.(type) {
	case nil:
	case []any:
		for _, e := range x {
			out = append(out, ordered.KeyString(e))
		}
	case string:
		for _, p := range strings.Split(x, ",") {
			out = append(out, strings.TrimSpace(p))
		}
	default:
		out = append(out, ordered.KeyString(x))
	}
	return out
}

// filterInterfaces keeps the interfaces whose names match any glob of
// interface (nil keeps all).
func filterInterfaces(ifaces *ordered.Map, iface any) *ordered.Map {
	if iface == nil {
		return ifaces
	}
	pats := splitInput(iface)
	ret := ordered.New()
	ifaces.Range(func(k, v any) bool {
		for _, p := range pats {
			if grains.Fnmatch(p, ordered.KeyString(k)) {
				ret.Set(k, v)
				break
			}
		}
		return true
	})
	return ret
}

// ipAddrs is _ip_addrs: the sorted unique addresses of proto.
func ipAddrs(ifaces *ordered.Map, iface any, loopback bool, proto string) []netip.Addr {
	set := map[netip.Addr]bool{}
	for _, a := range addrEntries(filterInterfaces(ifaces, iface), proto) {
		ip, err := netip.ParseAddr(ordered.KeyString(a.Value("address")))
		if err != nil {
			continue
		}
		if !ip.IsLoopback() || loopback {
			set[ip.WithZone("")] = true
		}
	}
	out := make([]netip.Addr, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

func strs[T fmt.Stringer](list []T) []any {
	out := []any{}
	for _, x := range list {
		out = append(out, x.String())
	}
	return out
}

// parseNetwork is ipaddress.ip_network(s, strict=False): "a/len",
// "a/netmask" or a bare address.
func parseNetwork(s string) (netip.Prefix, error) {
	addr, mask, ok := strings.Cut(strings.TrimSpace(s), "/")
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%s does not appear to be an IPv4 or IPv6 network", py.Repr(s))
	}
	bits := ip.BitLen()
	if ok {
		if n, err := strconv.Atoi(mask); err == nil && n >= 0 && n <= ip.BitLen() {
			bits = n
		} else if n, ok := netmaskBits(mask); ok && ip.Is4() {
			bits = n
		} else {
			return netip.Prefix{}, fmt.Errorf("%s does not appear to be an IPv4 or IPv6 network", py.Repr(s))
		}
	}
	return netip.PrefixFrom(ip.WithZone(""), bits).Masked(), nil
}

// netmaskBits converts a dotted IPv4 netmask to its prefix length.
func netmaskBits(mask string) (int, bool) {
	ip := net.ParseIP(mask).To4()
	if ip == nil {
		return 0, false
	}
	ones, bits := net.IPMask(ip).Size()
	return ones, bits == 32
}

// networks is _ip_networks over proto, sorted as Python sorts networks.
func networks(ifaces *ordered.Map, iface any, loopback bool, proto string) []netip.Prefix {
	key := "netmask"
	if proto == "inet6" {
		key = "prefixlen"
	}
	set := map[netip.Prefix]bool{}
	for _, a := range addrEntries(filterInterfaces(ifaces, iface), proto) {
		ip, n := ordered.KeyString(a.Value("address")), a.Value(key)
		if ip == "" || !modules.Truthy(n) {
			continue
		}
		p, err := parseNetwork(ip + "/" + ordered.KeyString(n))
		if err != nil {
			continue
		}
		if !p.Addr().IsLoopback() || loopback {
			set[p] = true
		}
	}
	return sortedPrefixes(set)
}

func sortedPrefixes(set map[netip.Prefix]bool) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Compare(out[j]) < 0 })
	return out
}

func verboseNetworks(list []netip.Prefix) *ordered.Map {
	ret := ordered.New()
	for _, p := range list {
		ret.Set(p.String(), ordered.FromPairs("address", p.Addr().String(), "netmask", netmask(p),
			"num_addresses", numAddresses(p), "prefixlen", p.Bits()))
	}
	return ret
}

func netmask(p netip.Prefix) string {
	ip, _ := netip.AddrFromSlice(net.CIDRMask(p.Bits(), p.Addr().BitLen()))
	return ip.String()
}

func broadcastOf(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	m := net.CIDRMask(p.Bits(), p.Addr().BitLen())
	for i := range b {
		b[i] |= ^m[i]
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// numAddresses is 2**(bits-prefixlen); it is an int while that fits and
// a decimal string beyond (IPv6 networks shorter than /65).
func numAddresses(p netip.Prefix) any {
	host := p.Addr().BitLen() - p.Bits()
	if host < 63 {
		return 1 << host
	}
	return new(big.Int).Lsh(big.NewInt(1), uint(host)).String()
}

// subnets is _subnets: interface networks except loopback, with
// secondaries, addresses without a mask counted as host routes.
func subnets(ifaces *ordered.Map, only any, proto string) []any {
	if only != nil {
		names := map[string]bool{}
		if l, ok := only.([]any); ok {
			for _, n := range l {
				names[ordered.KeyString(n)] = true
			}
		} else {
			names[ordered.KeyString(only)] = true
		}
		sel := ordered.New()
		ifaces.Range(func(k, v any) bool {
			if names[ordered.KeyString(k)] {
				sel.Set(k, v)
			}
			return true
		})
		ifaces = sel
	}
	key, dflt := "netmask", "32"
	if proto == "inet6" {
		key, dflt = "prefixlen", "128"
	}
	set := map[netip.Prefix]bool{}
	for _, a := range addrEntries(ifaces, proto) {
		n := dflt
		if v, ok := a.Get(key); ok {
			n = ordered.KeyString(v)
		}
		p, err := parseNetwork(ordered.KeyString(a.Value("address")) + "/" + n)
		if err != nil || p.Addr().IsLoopback() {
			continue
		}
		ip, _ := netip.ParseAddr(ordered.KeyString(a.Value("address")))
		if ip.IsLoopback() {
			continue
		}
		set[p] = true
	}
	return strs(sortedPrefixes(set))
}

// privateNets are the ranges Python's ipaddress is_private covers
// (the IANA special-purpose registries as CPython 3.10 lists them).
var privateNets = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "10.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/29", "192.0.0.170/31", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32", "::1/128", "::/128", "::ffff:0:0/96", "100::/64",
		"2001::/23", "2001:2::/48", "2001:db8::/32", "2001:10::/28", "fc00::/7", "fe80::/10"} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

func isPrivate(ip netip.Addr) bool {
	for _, p := range privateNets {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// reversePointer is ipaddress's reverse_pointer.
func reversePointer(ip netip.Addr) string {
	if ip.Is4() {
		b := ip.As4()
		return fmt.Sprintf("%d.%d.%d.%d.in-addr.arpa", b[3], b[2], b[1], b[0])
	}
	hex := fmt.Sprintf("%x", ip.As16())
	parts := make([]string, 0, 32)
	for i := len(hex) - 1; i >= 0; i-- {
		parts = append(parts, hex[i:i+1])
	}
	return strings.Join(parts, ".") + ".ip6.arpa"
}

func parseIP(s string) (netip.Addr, error) {
	ip, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return ip, modules.Errorf("%s does not appear to be an IPv4 or IPv6 address", py.Repr(s))
	}
	return ip, nil
}

func parseByte(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid literal for int() with base 10: %s", py.Repr(s))
	}
	return n, nil
}

func hex2(n int) string { return fmt.Sprintf("%02X", n) }
