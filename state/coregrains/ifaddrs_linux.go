package coregrains

import (
	"encoding/binary"
	"net/netip"
	"syscall"
)

// addrsByIndex returns every interface address by interface index from
// one netlink dump. net.Interface.Addrs dumps all of the host's
// addresses once per interface and keeps that interface's, which is
// quadratic: on a host with a hundred interfaces (containers, network
// namespaces' veth pairs) the grains then parsed ten thousand netlink
// messages. Addresses are picked as net's newAddr does (IFA_LOCAL
// before IFA_ADDRESS on a point-to-point link) and kept in the dump's
// order, so the result is the same as per-interface Addrs, with each
// address's flags (ifa_flags, or IFA_FLAGS where the kernel sends it)
// so that secondary IPv4 addresses are told apart as iproute2 does.
func addrsByIndex() (map[int][]ifAddr, error) {
	rib, err := syscall.NetlinkRIB(syscall.RTM_GETADDR, syscall.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	msgs, err := syscall.ParseNetlinkMessage(rib)
	if err != nil {
		return nil, err
	}
	out := map[int][]ifAddr{}
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Type == syscall.NLMSG_DONE {
			break
		}
		if m.Header.Type != syscall.RTM_NEWADDR || len(m.Data) < syscall.SizeofIfAddrmsg {
			continue
		}
		family, index := m.Data[0], int(binary.NativeEndian.Uint32(m.Data[4:8])) // IfAddrmsg.Index
		attrs, err := syscall.ParseNetlinkRouteAttr(m)
		if err != nil {
			return nil, err
		}
		if a, ok := pickAddr(family, attrs); ok {
			out[index] = append(out[index], ifAddr{ip: a, flags: addrFlags(m.Data[2], attrs)})
		}
	}
	return out, nil
}

// ifaFlags is IFA_FLAGS of linux/if_addr.h: the 32-bit address flags,
// which supersede the 8-bit ifa_flags when present.
const ifaFlags = 8

// addrFlags is the flags of one RTM_NEWADDR, as iproute2 reads them.
func addrFlags(ifaFlagsByte byte, attrs []syscall.NetlinkRouteAttr) uint32 {
	for _, a := range attrs {
		if a.Attr.Type == ifaFlags && len(a.Value) >= 4 {
			return binary.NativeEndian.Uint32(a.Value[:4])
		}
	}
	return uint32(ifaFlagsByte)
}

// pickAddr is the address net's newAddr reads from one RTM_NEWADDR.
func pickAddr(family byte, attrs []syscall.NetlinkRouteAttr) (netip.Addr, bool) {
	ptp := false
	for _, a := range attrs {
		if a.Attr.Type == syscall.IFA_LOCAL {
			ptp = true
			break
		}
	}
	for _, a := range attrs {
		if ptp && a.Attr.Type == syscall.IFA_ADDRESS {
			continue
		}
		switch {
		case family == syscall.AF_INET && len(a.Value) >= 4:
			return netip.AddrFrom4([4]byte(a.Value[:4])), true
		case family == syscall.AF_INET6 && len(a.Value) >= 16:
			return netip.AddrFrom16([16]byte(a.Value[:16])), true
		}
		return netip.Addr{}, false
	}
	return netip.Addr{}, false
}
