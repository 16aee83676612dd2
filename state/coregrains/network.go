package coregrains

import (
	"context"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// lookupTimeout bounds each DNS lookup behind fqdn, fqdn_ip* and fqdns,
// so that a host with a slow or lossy resolver still gathers promptly;
// fqdns is then partial, where Salt would wait out the resolver.
const lookupTimeout = 250 * time.Millisecond

// ifaceAddrs is it.Addrs() as netip addresses (one netlink dump per
// interface; addrsByIndex makes one for all of them). net gives no
// address flags, so this fallback files no address as secondary.
func ifaceAddrs(it net.Interface) []ifAddr {
	addrs, _ := it.Addrs()
	var out []ifAddr
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(ipn.IP); ok {
				out = append(out, ifAddr{ip: ip.Unmap()})
			}
		}
	}
	return out
}

func interfaces() []iface {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	byIndex, err := addrsByIndex()
	out := make([]iface, 0, len(ifs))
	for _, it := range ifs {
		f := iface{name: it.Name, hwaddr: it.HardwareAddr.String()}
		if f.hwaddr == "" && it.Flags&net.FlagLoopback != 0 {
			f.hwaddr = "00:00:00:00:00:00"
		}
		addrs := byIndex[it.Index]
		if err != nil {
			addrs = ifaceAddrs(it)
		}
		for _, a := range addrs {
			f.add(a)
		}
		out = append(out, f)
	}
	return out
}

// netGrains gathers the interface, address, hostname and resolver
// grains (core.py hostname, ip_fqdn, ip*_interfaces, hwaddr_interfaces,
// dns, fqdns, default_gateway).
func (o GatherOptions) netGrains(ctx context.Context) map[string]any {
	ifs := interfaces()
	g := ipGrains(ifs)
	var v4, v6 []netip.Addr
	for _, f := range ifs {
		v4 = append(append(v4, f.inet...), f.secondary...)
		v6 = append(v6, f.inet6...)
	}

	host, _ := os.Hostname()
	fqdn := o.fqdn(ctx, host)
	short, domain, _ := strings.Cut(fqdn, ".")
	g["localhost"], g["fqdn"], g["host"], g["domain"] = host, fqdn, short, domain
	if ad, ok := o.Opts.Get("append_domain"); ok {
		g["append_domain"] = ad
	}
	var wg sync.WaitGroup
	var fqdn4, fqdn6, fqdns []any
	wg.Add(2)
	go func() { defer wg.Done(); fqdn4, fqdn6 = o.fqdnIPs(ctx, fqdn, len(v4) > 0, len(v6) > 0) }()
	go func() { defer wg.Done(); fqdns = o.fqdns(ctx, v4, v6) }()
	switch p := "/run/systemd/resolve/resolv.conf"; {
	case runtime.GOOS == "windows":
		// core.py dns returns {} on Windows.
	case o.exists(p):
		text, _ := o.readFile(p)
		g["dns"] = parseResolv(text)
	default:
		if text, err := o.readFile("/etc/resolv.conf"); err == nil {
			g["dns"] = parseResolv(text)
		}
	}
	if _, err := exec.LookPath("ip"); err == nil {
		for k, v := range o.gateways() {
			g[k] = v
		}
	}
	wg.Wait()
	g["fqdn_ip4"], g["fqdn_ip6"], g["fqdns"] = fqdn4, fqdn6, fqdns
	return g
}

// sortedAddrs is fqdn_ip4/fqdn_ip6: getaddrinfo's addresses as
// inet_ntop prints them, unique. Salt lists a Python set of the
// strings, whose order changes with each process's hash seed; Brine
// sorts them so that the grain is stable.
func sortedAddrs(a []netip.Addr) []any {
	sort.Slice(a, func(i, j int) bool { return a[i].Less(a[j]) })
	out := []any{}
	for i, x := range a {
		if i > 0 && x == a[i-1] {
			continue
		}
		out = append(out, ntop(x))
	}
	return out
}

// fqdn resolves the canonical name of host as glibc's getaddrinfo with
// AI_CANONNAME does: the first name on the /etc/hosts line that lists
// it, else the DNS canonical name, else host itself.
func (o GatherOptions) fqdn(ctx context.Context, host string) string {
	if host == "" {
		return "localhost.localdomain"
	}
	if hosts, err := o.readFile("/etc/hosts"); err == nil {
		for _, line := range strings.Split(hosts, "\n") {
			line, _, _ = strings.Cut(line, "#")
			f := strings.Fields(line)
			if len(f) >= 2 && has(f[1:], host) {
				return f[1]
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	if cname, err := net.DefaultResolver.LookupCNAME(ctx, host); err == nil && cname != "" {
		return strings.TrimSuffix(cname, ".")
	}
	return host
}

func (o GatherOptions) fqdnIPs(ctx context.Context, fqdn string, want4, want6 bool) (v4, v6 []any) {
	v4, v6 = []any{}, []any{}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", fqdn)
	if err != nil {
		return v4, v6
	}
	var a4, a6 []netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if a.Is4() {
			a4 = append(a4, a)
		} else {
			a6 = append(a6, a.WithZone(""))
		}
	}
	if want4 {
		v4 = sortedAddrs(a4)
	}
	if want6 {
		v6 = sortedAddrs(a6)
	}
	return v4, v6
}

// fqdns reverse-resolves every non-loopback address concurrently, as
// salt/modules/network.py fqdns does; enable_fqdns_grains: False
// turns it off.
func (o GatherOptions) fqdns(ctx context.Context, v4, v6 []netip.Addr) []any {
	if !o.optBool("enable_fqdns_grains", true) {
		return []any{}
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	var mu sync.Mutex
	set := map[string]bool{}
	var wg sync.WaitGroup
	for _, a := range append(append([]netip.Addr{}, v4...), v6...) {
		if a.IsLoopback() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			names, err := net.DefaultResolver.LookupAddr(ctx, a.WithZone("").String())
			if err != nil || len(names) == 0 {
				return
			}
			mu.Lock()
			set[strings.TrimSuffix(names[0], ".")] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	return sortedKeys(set)
}

// gateways reads the default routes from /proc/net instead of running
// `ip route show` (core.py default_gateway).
func (o GatherOptions) gateways() map[string]any {
	g := map[string]any{"ip_gw": false, "ip4_gw": false, "ip6_gw": false}
	if text, err := o.readFile("/proc/net/route"); err == nil {
		for _, line := range strings.Split(text, "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 8 || f[1] != "00000000" || f[7] != "00000000" {
				continue
			}
			g["ip_gw"], g["ip4_gw"] = true, true
			if b, err := hex.DecodeString(f[2]); err == nil && len(b) == 4 && f[2] != "00000000" {
				g["ip4_gw"] = netip.AddrFrom4([4]byte{b[3], b[2], b[1], b[0]}).String()
			}
			break
		}
	}
	if text, err := o.readFile("/proc/net/ipv6_route"); err == nil {
		for _, line := range strings.Split(text, "\n") {
			f := strings.Fields(line)
			if len(f) < 10 || f[0] != strings.Repeat("0", 32) || f[1] != "00" || f[9] == "lo" {
				continue
			}
			g["ip_gw"], g["ip6_gw"] = true, true
			if b, err := hex.DecodeString(f[4]); err == nil && len(b) == 16 && f[4] != strings.Repeat("0", 32) {
				g["ip6_gw"] = netip.AddrFrom16([16]byte(b)).String()
			}
			break
		}
	}
	return g
}

func sortedKeys(set map[string]bool) []any {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return toAny(keys)
}
