package target

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// ipcidr is Salt's ipcidr matcher (salt/matchers/ipcidr_match.py): a
// single address must appear, as Python's ipaddress prints it, in the
// ipv4 or ipv6 grain; a network must contain one of the grain's
// addresses.
type ipcidr struct {
	grain  string // "ipv4" or "ipv6"
	addr   string // canonical address text when the target is an address
	prefix netip.Prefix
	isNet  bool
}

func compileIPCIDR(tgt string) (*ipcidr, error) {
	if a, err := parsePyAddr(tgt); err == nil {
		return &ipcidr{grain: ipGrain(a), addr: pyAddrString(a)}, nil
	}
	p, err := parsePyNetwork(tgt)
	if err != nil {
		return nil, &PatternError{Kind: IPCIDR, Pattern: tgt, Msg: "invalid IP/CIDR target"}
	}
	return &ipcidr{grain: ipGrain(p.Addr()), prefix: p, isNet: true}, nil
}

func ipGrain(a netip.Addr) string {
	if a.Is4() {
		return "ipv4"
	}
	return "ipv6"
}

func (c *ipcidr) match(grains *ordered.Map) bool {
	v, ok := grains.Get(c.grain)
	if !ok {
		return false
	}
	if !c.isNet {
		return pyContains(v, c.addr)
	}
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			continue
		}
		// Python raises on an unparsable grain address; Brine skips it.
		a, err := parsePyAddr(s)
		if err != nil || a.Is4() != c.prefix.Addr().Is4() {
			continue
		}
		if c.prefix.Contains(a.WithZone("")) {
			return true
		}
	}
	return false
}

// pyContains is Python's `s in v`: list membership, substring of a
// string, or key of a dict.
func pyContains(v any, s string) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if es, ok := e.(string); ok && es == s {
				return true
			}
		}
	case string:
		return strings.Contains(x, s)
	case *ordered.Map:
		return x.Has(s)
	}
	return false
}

// parsePyAddr parses an address as ipaddress.ip_address does: dotted
// quad without leading zeros, or IPv6 with an optional %scope.
func parsePyAddr(s string) (netip.Addr, error) {
	return netip.ParseAddr(s)
}

// parsePyNetwork parses a network as ipaddress.ip_network(strict=True):
// address/prefixlen, or for IPv4 address/netmask or address/hostmask; no
// host bits may be set.
func parsePyNetwork(s string) (netip.Prefix, error) {
	addrS, maskS, hasMask := strings.Cut(s, "/")
	a, err := netip.ParseAddr(addrS)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.WithZone("")
	bits := a.BitLen()
	if hasMask {
		if bits, err = parsePrefixLen(maskS, a); err != nil {
			return netip.Prefix{}, err
		}
	}
	p := netip.PrefixFrom(a, bits)
	if p.Masked().Addr() != a {
		return netip.Prefix{}, strconv.ErrSyntax // "has host bits set"
	}
	return p, nil
}

func parsePrefixLen(m string, a netip.Addr) (int, error) {
	if m != "" && strings.Trim(m, "0123456789") == "" {
		n, err := strconv.Atoi(m)
		if err != nil || n > a.BitLen() {
			return 0, strconv.ErrRange
		}
		return n, nil
	}
	if !a.Is4() {
		return 0, strconv.ErrSyntax
	}
	mask, err := netip.ParseAddr(m)
	if err != nil || !mask.Is4() {
		return 0, strconv.ErrSyntax
	}
	b := mask.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	if n, ok := contiguousOnes(v); ok {
		return n, nil
	}
	if n, ok := contiguousOnes(^v); ok { // a hostmask
		return n, nil
	}
	return 0, strconv.ErrSyntax
}

// contiguousOnes reports the prefix length of a netmask like 255.255.0.0.
func contiguousOnes(v uint32) (int, bool) {
	n := 0
	for n < 32 && v&(1<<(31-n)) != 0 {
		n++
	}
	if n < 32 && v<<n != 0 {
		return 0, false
	}
	return n, true
}

// pyAddrString prints an address as Python 3.10's str(ip_address(...)):
// IPv6 as eight hextets with the longest run (of two or more) of zero
// hextets compressed, IPv4-mapped addresses included.
func pyAddrString(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	b := a.As16()
	var h [8]uint16
	for i := range h {
		h[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	bestAt, bestLen := -1, 1
	for i := 0; i < 8; {
		if h[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && h[j] == 0 {
			j++
		}
		if j-i > bestLen {
			bestAt, bestLen = i, j-i
		}
		i = j
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if i == bestAt {
			sb.WriteString("::")
			i += bestLen - 1
			continue
		}
		if i > 0 && i != bestAt+bestLen {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(h[i]), 16))
	}
	if z := a.Zone(); z != "" {
		sb.WriteString("%" + z)
	}
	return sb.String()
}
