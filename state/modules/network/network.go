// Package network is Salt's network execution module
// (salt/modules/network.py with salt/utils/network.py) for Linux:
// interfaces and addresses, subnets and address arithmetic, sockets and
// routes, and the ping, dig and arp commands.
//
// Interfaces come from `ip addr show` as in Salt (with the Go runtime's
// interface list when ip(8) is missing). Sockets and routes are read
// from /proc/net rather than from netstat's or ss's output; the rows have
// the shape of Salt's netstat-based parsers.
//
// Not here: wol, traceroute, mod_hostname, get_bufsize,
// mod_bufsize and fqdns.
package network

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func reg(name, doc string, fn modules.Func, p ...modules.Param) {
	modules.Register(modules.Function{Name: "network." + name, Doc: doc, Spec: modules.Spec{Params: p}, Fn: fn})
}

func init() {
	registerAddrs()
	registerTables()
	registerCommands()
}

func registerAddrs() {
	reg("interfaces", "Return {iface: {up, hwaddr, inet: [{address, netmask, broadcast, label}], inet6: [{address, prefixlen, scope}]}}.",
		func(ctx context.Context, _ *modules.Call) (any, error) { return interfaces(ctx), nil })
	for _, n := range []string{"ip_addrs", "ipaddrs"} {
		reg(n, "Return the sorted IPv4 addresses of the host; loopback only with include_loopback; interface names or globs, a cidr or type=public/private narrow the list.",
			ipAddrs4, opt("interface", nil), opt("include_loopback", false), opt("cidr", nil), opt("type", nil))
	}
	for _, n := range []string{"ip_addrs6", "ipaddrs6"} {
		reg(n, "Return the sorted IPv6 addresses of the host; ::1 only with include_loopback; interface and cidr narrow the list.",
			ipAddrs6, opt("interface", nil), opt("include_loopback", false), opt("cidr", nil))
	}
	for _, n := range []string{"hw_addr", "hwaddr"} {
		reg(n, "Return the MAC address of iface.", ifaceField(func(d *ordered.Map) any {
			if v, ok := d.Get("hwaddr"); ok {
				return v
			}
			return ""
		}), req("iface"))
	}
	reg("interface", "Return the inet address list of iface.", ifaceField(func(d *ordered.Map) any {
		if v, ok := d.Get("inet"); ok {
			return v
		}
		return ""
	}), req("iface"))
	reg("interface_ip", "Return the first IPv4 address of iface.", ifaceField(func(d *ordered.Map) any {
		if l, ok := d.Value("inet").([]any); ok && len(l) > 0 {
			if m, ok := l[0].(*ordered.Map); ok {
				return m.Value("address")
			}
		}
		return ""
	}), req("iface"))
	reg("subnets", "Return the IPv4 networks the host's non-loopback addresses belong to, optionally of the given interfaces.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			return subnets(interfaces(ctx), c.Arg("interfaces"), "inet"), nil
		}, opt("interfaces", nil))
	reg("subnets6", "Return the IPv6 networks the host's non-loopback addresses belong to.",
		func(ctx context.Context, _ *modules.Call) (any, error) {
			return subnets(interfaces(ctx), nil, "inet6"), nil
		})
	reg("ip_networks", "Return the IPv4 networks of the host's interfaces; verbose=True gives {network: {address, netmask, num_addresses, prefixlen}}.",
		ipNetworks("inet"), opt("interface", nil), opt("include_loopback", false), opt("verbose", false))
	reg("ip_networks6", "Return the IPv6 networks of the host's interfaces, as network.ip_networks.",
		ipNetworks("inet6"), opt("interface", nil), opt("include_loopback", false), opt("verbose", false))
	reg("in_subnet", "Report whether any address of the host is within cidr.", inSubnet, req("cidr"))
	reg("ip_in_subnet", "Report whether ip_addr is within cidr.", func(_ context.Context, c *modules.Call) (any, error) {
		return addrsInSubnet(c.Env, c.Str("cidr"), splitInput(c.Arg("ip_addr")))
	}, req("ip_addr"), req("cidr"))
	reg("calc_net", "Return the network of ip_addr (CIDR notation allowed) with the optional netmask, in CIDR notation.",
		func(_ context.Context, c *modules.Call) (any, error) {
			s := c.Str("ip_addr")
			if c.Arg("netmask") != nil {
				s += "/" + c.Str("netmask")
			}
			p, err := parseNetwork(s)
			if err != nil {
				return nil, err
			}
			return p.String(), nil
		}, req("ip_addr"), opt("netmask", nil))
	reg("convert_cidr", "Return {network, netmask, broadcast} of cidr.", func(_ context.Context, c *modules.Call) (any, error) {
		p, err := parseNetwork(c.Str("cidr"))
		if err != nil {
			return nil, err
		}
		return ordered.FromPairs("network", p.Addr().String(), "netmask", netmask(p), "broadcast", broadcastOf(p).String()), nil
	}, req("cidr"))
	reg("is_private", "Report whether ip_addr is a private address, as Python's ipaddress defines it.",
		ipPredicate(isPrivate), req("ip_addr"))
	reg("is_loopback", "Report whether ip_addr is a loopback address.",
		ipPredicate(netip.Addr.IsLoopback), req("ip_addr"))
	reg("reverse_ip", "Return the reverse DNS name of ip_addr (in-addr.arpa or ip6.arpa).",
		func(_ context.Context, c *modules.Call) (any, error) {
			ip, err := parseIP(c.Str("ip_addr"))
			if err != nil {
				return nil, err
			}
			return reversePointer(ip), nil
		}, req("ip_addr"))
	reg("iphexval", "Return the IPv4 address ip as eight upper-case hex digits.", iphexval, req("ip"))
}

func ipAddrs4(ctx context.Context, c *modules.Call) (any, error) {
	addrs := ipAddrs(interfaces(ctx), c.Arg("interface"), c.Bool("include_loopback"), "inet")
	if modules.Truthy(c.Arg("cidr")) {
		return inCIDR(addrs, c.Str("cidr")), nil
	}
	out := []any{}
	for _, a := range addrs {
		switch c.Str("type") {
		case "public":
			if isPrivate(a) {
				continue
			}
		case "private":
			if !isPrivate(a) {
				continue
			}
		}
		out = append(out, a.String())
	}
	return out, nil
}

func ipAddrs6(ctx context.Context, c *modules.Call) (any, error) {
	addrs := ipAddrs(interfaces(ctx), c.Arg("interface"), c.Bool("include_loopback"), "inet6")
	if modules.Truthy(c.Arg("cidr")) {
		return inCIDR(addrs, c.Str("cidr")), nil
	}
	return strs(addrs), nil
}

func inCIDR(addrs []netip.Addr, cidr string) []any {
	out := []any{}
	p, err := parseNetwork(cidr)
	if err != nil {
		return out
	}
	for _, a := range addrs {
		if p.Contains(a) {
			out = append(out, a.String())
		}
	}
	return out
}

// ifaceField reads one field of an interface, or returns Salt's error
// text (a string, not an exception) for an unknown interface.
func ifaceField(get func(*ordered.Map) any) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		ifaces := interfaces(ctx)
		name := c.Str("iface")
		if d, ok := ifaces.Value(name).(*ordered.Map); ok {
			return get(d), nil
		}
		msg := `Interface "` + name + `" not in available interfaces: "` + strings.Join(ifaces.StringKeys(), `", "`) + `"`
		c.Env.Log.Error(msg)
		return msg, nil
	}
}

func ipNetworks(proto string) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		nets := networks(interfaces(ctx), c.Arg("interface"), c.Bool("include_loopback"), proto)
		if c.Bool("verbose") {
			return verboseNetworks(nets), nil
		}
		return strs(nets), nil
	}
}

func inSubnet(ctx context.Context, c *modules.Call) (any, error) {
	ifaces := interfaces(ctx)
	var addrs []string
	for _, a := range ipAddrs(ifaces, nil, false, "inet") {
		addrs = append(addrs, a.String())
	}
	for _, a := range ipAddrs(ifaces, nil, false, "inet6") {
		addrs = append(addrs, a.String())
	}
	return addrsInSubnet(c.Env, c.Str("cidr"), addrs)
}

// addrsInSubnet is salt.utils.network.in_subnet: an invalid CIDR is
// logged and gives False.
func addrsInSubnet(env *modules.Env, cidr string, addrs []string) (any, error) {
	p, err := parseNetwork(cidr)
	if err != nil {
		env.Log.Error("Invalid CIDR '" + cidr + "'")
		return false, nil
	}
	for _, s := range addrs {
		ip, err := parseIP(s)
		if err != nil {
			return nil, err
		}
		if p.Contains(ip) {
			return true, nil
		}
	}
	return false, nil
}

func ipPredicate(pred func(netip.Addr) bool) modules.Func {
	return func(_ context.Context, c *modules.Call) (any, error) {
		ip, err := parseIP(c.Str("ip_addr"))
		if err != nil {
			return nil, err
		}
		return pred(ip.Unmap()), nil
	}
}

func iphexval(_ context.Context, c *modules.Call) (any, error) {
	var b strings.Builder
	for _, part := range strings.Split(c.Str("ip"), ".") {
		ip, err := parseByte(part)
		if err != nil {
			return nil, err
		}
		b.WriteString(strings.ToUpper(hex2(ip)))
	}
	return b.String(), nil
}

func registerTables() {
	reg("netstat", "Return the open TCP and UDP sockets as netstat -tulpnea rows {proto, recv-q, send-q, local-address, remote-address, state, user, inode, program}.",
		func(context.Context, *modules.Call) (any, error) { return netstat("/proc"), nil })
	reg("active_tcp", "Return the established TCP connections as {n: {local_addr, local_port, remote_addr, remote_port}}.",
		func(context.Context, *modules.Call) (any, error) {
			return activeTCP(readFile("/proc/net/tcp"), readFile("/proc/net/tcp6")), nil
		})
	reg("routes", "Return the routing table as [{addr_family, destination, gateway, netmask, flags, interface}]; family inet or inet6 filters.",
		func(_ context.Context, c *modules.Call) (any, error) { return routes(c.Arg("family")) }, opt("family", nil))
	reg("default_route", "Return the default routes (0.0.0.0 and ::/0), optionally of one family.",
		defaultRoute, opt("family", nil))
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func netstat(proc string) []any {
	owners := socketOwners(proc)
	out := []any{}
	for _, p := range []string{"tcp", "tcp6", "udp", "udp6"} {
		out = append(out, netstatEntries(p, parseSockets(readFile(proc+"/net/"+p)), owners)...)
	}
	return out
}

func checkFamily(family any) error {
	if family != nil && family != "inet" && family != "inet6" {
		return modules.Errorf("Invalid address family %s", ordered.KeyString(family))
	}
	return nil
}

func routes(family any) ([]any, error) {
	if err := checkFamily(family); err != nil {
		return nil, err
	}
	all := append(parseRoute4(readFile("/proc/net/route")), parseRoute6(readFile("/proc/net/ipv6_route"))...)
	if family == nil {
		return all, nil
	}
	out := []any{}
	for _, r := range all {
		if r.(*ordered.Map).Value("addr_family") == family {
			out = append(out, r)
		}
	}
	return out, nil
}

func defaultRoute(_ context.Context, c *modules.Call) (any, error) {
	rs, err := routes(c.Arg("family"))
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, r := range rs {
		switch r.(*ordered.Map).Value("destination") {
		case "0.0.0.0", "default", "::/0":
			out = append(out, r)
		}
	}
	return out, nil
}

func registerCommands() {
	reg("ping", "Ping host four times and return ping's output, or True/False with return_boolean; timeout sets -W.",
		ping, req("host"), opt("timeout", false), opt("return_boolean", false))
	reg("dig", "Return the output of dig host.", func(ctx context.Context, c *modules.Call) (any, error) {
		out, _, err := runText(ctx, "dig", sanitizeHost(c.Str("host")))
		return out, err
	}, req("host"))
	reg("arp", "Return the ARP table as {mac: ip} from arp -an.", func(ctx context.Context, _ *modules.Call) (any, error) {
		out, _, err := runText(ctx, "arp", "-an")
		if err != nil {
			return nil, err
		}
		return parseArp(out), nil
	})
	reg("get_hostname", "Return the host name.", func(context.Context, *modules.Call) (any, error) {
		h, err := os.Hostname()
		if err != nil {
			return nil, modules.Errorf("get hostname: %w", err)
		}
		return h, nil
	})
	reg("get_fqdn", "Return the fully qualified domain name (Python's socket.getfqdn()).", getFQDN)
}

// sanitizeHost is salt.utils.network.sanitize_host: letters, digits,
// '.', '-' and '_' of the first 255 characters.
func sanitizeHost(h string) string {
	if len(h) > 255 {
		h = h[:255]
	}
	var b strings.Builder
	for _, r := range h {
		if r < 128 && (r == '.' || r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// runText runs a command as cmd.run does for Salt's cross-module calls:
// stdout and stderr merged, trailing newline removed, the exit status
// returned apart.
func runText(ctx context.Context, name string, args ...string) (string, int, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", 0, modules.Errorf("Unable to run command '%s': %s not found", name, name)
	}
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return strings.TrimRight(string(out), "\n"), exitErr.ExitCode(), nil
	}
	if err != nil {
		return "", 0, modules.Errorf("run %s: %w", name, err)
	}
	return strings.TrimRight(string(out), "\n"), 0, nil
}

func ping(ctx context.Context, c *modules.Call) (any, error) {
	args := []string{"-c", "4", sanitizeHost(c.Str("host"))}
	if modules.Truthy(c.Arg("timeout")) {
		args = append([]string{"-W", c.Str("timeout")}, args...)
	}
	out, rc, err := runText(ctx, "ping", args...)
	if c.Bool("return_boolean") {
		return err == nil && rc == 0, nil
	}
	return out, err
}

func parseArp(out string) *ordered.Map {
	ret := ordered.New()
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		ret.Set(f[3], strings.Trim(f[1], "()"))
	}
	return ret
}

// getFQDN follows socket.getfqdn(): the first name with a dot among the
// canonical name and aliases of the host name's address, else the host
// name. Lookups are bounded so that a dead resolver does not hang a job.
func getFQDN(ctx context.Context, _ *modules.Call) (any, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, modules.Errorf("get hostname: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil || len(addrs) == 0 {
		return host, nil
	}
	names, _ := net.DefaultResolver.LookupAddr(ctx, addrs[0])
	for _, n := range names {
		if n = strings.TrimSuffix(n, "."); strings.Contains(n, ".") {
			return n, nil
		}
	}
	return host, nil
}
