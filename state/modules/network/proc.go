package network

import (
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// hexAddr decodes an address of /proc/net/{tcp,udp,route}: 32-bit words
// in host (little-endian) order.
func hexAddr(s string) (netip.Addr, bool) {
	b, err := hex.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.Addr{}, false
	}
	for i := 0; i+4 <= len(b); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(b[i:]))
	}
	a, _ := netip.AddrFromSlice(b)
	return a, true
}

// hexAddr6Plain decodes /proc/net/ipv6_route's addresses, which are
// written in network order.
func hexAddr6Plain(s string) (netip.Addr, bool) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 16 {
		return netip.Addr{}, false
	}
	return netip.AddrFrom16([16]byte(b)), true
}

var tcpStates = map[string]string{"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1",
	"05": "FIN_WAIT2", "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN",
	"0B": "CLOSING", "0C": "NEW_SYN_RECV"}

// socketEntry is one parsed line of /proc/net/{tcp,tcp6,udp,udp6}.
type socketEntry struct {
	local, remote string
	localIP       netip.Addr
	localPort     int
	remoteIP      netip.Addr
	remotePort    int
	state         string
	txq, rxq      int64
	uid, inode    string
}

func parseEndpoint(s string) (netip.Addr, int, bool) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.Addr{}, 0, false
	}
	ip, ok := hexAddr(h)
	port, err := strconv.ParseUint(p, 16, 16)
	return ip, int(port), ok && err == nil
}

// parseSockets reads a /proc/net socket table.
func parseSockets(text string) []socketEntry {
	var out []socketEntry
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[0] == "sl" {
			continue
		}
		var e socketEntry
		var ok1, ok2 bool
		e.localIP, e.localPort, ok1 = parseEndpoint(f[1])
		e.remoteIP, e.remotePort, ok2 = parseEndpoint(f[2])
		tx, rx, ok3 := strings.Cut(f[4], ":")
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		e.txq, _ = strconv.ParseInt(tx, 16, 64)
		e.rxq, _ = strconv.ParseInt(rx, 16, 64)
		e.local = e.localIP.String() + ":" + strconv.Itoa(e.localPort)
		e.remote = e.remoteIP.String() + ":" + portOrStar(e.remotePort)
		e.state, e.uid, e.inode = strings.ToUpper(f[3]), f[7], f[9]
		out = append(out, e)
	}
	return out
}

func portOrStar(p int) string {
	if p == 0 {
		return "*"
	}
	return strconv.Itoa(p)
}

// socketOwners maps socket inodes to netstat's "pid/name" by scanning
// /proc/*/fd; processes that cannot be read are skipped, so their
// sockets show "-" as netstat prints them without privileges.
func socketOwners(proc string) map[string]string {
	owners := map[string]string{}
	pids, _ := os.ReadDir(proc)
	for _, d := range pids {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(proc, d.Name(), "fd"))
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(proc, d.Name(), "comm"))
		name := d.Name() + "/" + strings.TrimSpace(string(comm))
		for _, fd := range fds {
			l, err := os.Readlink(filepath.Join(proc, d.Name(), "fd", fd.Name()))
			if inode, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
				owners[strings.TrimSuffix(inode, "]")] = name
			}
		}
	}
	return owners
}

// netstatEntries renders socket tables in the shape of Salt's
// _netstat_linux (netstat -tulpnea): tcp rows carry a state, udp rows
// do not; values are strings as netstat prints them.
func netstatEntries(proto string, entries []socketEntry, owners map[string]string) []any {
	out := []any{}
	for _, e := range entries {
		prog := owners[e.inode]
		if prog == "" {
			prog = "-"
		}
		m := ordered.FromPairs("proto", proto, "recv-q", strconv.FormatInt(e.rxq, 10), "send-q", strconv.FormatInt(e.txq, 10),
			"local-address", e.local, "remote-address", e.remote)
		if strings.HasPrefix(proto, "tcp") {
			m.Set("state", tcpStates[e.state])
		}
		m.Set("user", e.uid)
		m.Set("inode", e.inode)
		m.Set("program", prog)
		out = append(out, m)
	}
	return out
}

// Route flags of <linux/route.h> and <linux/ipv6_route.h>.
const (
	rtfUp       = 0x1
	rtfGateway  = 0x2
	rtfHost     = 0x4
	rtfDynamic  = 0x10
	rtfModified = 0x20
	rtfReject   = 0x200
	rtfLocal    = 0x80000000
)

func routeFlags(fl uint64) string {
	var b strings.Builder
	for _, f := range []struct {
		bit uint64
		c   string
	}{{rtfUp, "U"}, {rtfGateway, "G"}, {rtfHost, "H"}, {rtfDynamic, "D"}, {rtfModified, "M"}, {rtfReject, "!"}} {
		if fl&f.bit != 0 {
			b.WriteString(f.c)
		}
	}
	return b.String()
}

// parseRoute4 reads /proc/net/route into netstat -rn's columns.
func parseRoute4(text string) []any {
	out := []any{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || f[0] == "Iface" {
			continue
		}
		dst, ok1 := hexAddr(f[1])
		gw, ok2 := hexAddr(f[2])
		mask, ok3 := hexAddr(f[7])
		fl, err := strconv.ParseUint(f[3], 16, 32)
		if !ok1 || !ok2 || !ok3 || err != nil || !dst.Is4() || !gw.Is4() || !mask.Is4() {
			continue
		}
		out = append(out, ordered.FromPairs("addr_family", "inet", "destination", dst.String(), "gateway", gw.String(),
			"netmask", mask.String(), "flags", routeFlags(fl), "interface", f[0]))
	}
	return out
}

// parseRoute6 reads /proc/net/ipv6_route as netstat -A inet6 -rn shows
// it: local and multicast routes are left out.
func parseRoute6(text string) []any {
	out := []any{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		dst, ok1 := hexAddr6Plain(f[0])
		plen, err1 := strconv.ParseUint(f[1], 16, 8)
		gw, ok2 := hexAddr6Plain(f[4])
		fl, err2 := strconv.ParseUint(f[8], 16, 32)
		if !ok1 || !ok2 || err1 != nil || err2 != nil || plen > 128 {
			continue
		}
		if fl&rtfLocal != 0 || dst.IsMulticast() || (fl&rtfReject != 0 && f[9] == "lo") {
			continue
		}
		out = append(out, ordered.FromPairs("addr_family", "inet6",
			"destination", netip.PrefixFrom(dst, int(plen)).String(), "gateway", gw.String(),
			"netmask", "", "flags", routeFlags(fl), "interface", f[9]))
	}
	return out
}

// activeTCP is salt.utils.network.active_tcp: established connections
// numbered from 0.
func activeTCP(tables ...string) *ordered.Map {
	ret := ordered.New()
	for _, t := range tables {
		for _, e := range parseSockets(t) {
			if e.state != "01" {
				continue
			}
			ret.Set(ret.Len(), ordered.FromPairs("local_addr", e.localIP.String(), "local_port", e.localPort,
				"remote_addr", e.remoteIP.String(), "remote_port", e.remotePort))
		}
	}
	return ret
}
