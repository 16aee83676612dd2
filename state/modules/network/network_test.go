package network

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newEnv() *modules.Env {
	return (&modules.Env{Pillar: ordered.New(), Opts: ordered.New(),
		Registry: modules.Default, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}).WithGrains(ordered.FromPairs("kernel", "Linux"))
}

func TestParseIPAddr(t *testing.T) {
	ifs := parseIPAddr(fixture(t, "ipaddr.txt"))
	tests := []struct{ iface, want string }{
		{"lo", `{"up":true,"hwaddr":"00:00:00:00:00:00","inet":[{"address":"127.0.0.1","netmask":"255.0.0.0","broadcast":null,"label":"lo"}],"inet6":[{"address":"::1","prefixlen":"128","scope":"host"}]}`},
		{"ifb0", `{"up":false,"hwaddr":"7e:17:01:90:cd:af"}`},
		{"eth0", `{"up":true,"hwaddr":"02:fc:00:00:00:01","inet":[{"address":"192.0.2.2","netmask":"255.255.255.0","broadcast":"192.0.2.255","label":"eth0"}],"inet6":[{"address":"fd00::2","prefixlen":"64","scope":"global"},{"address":"fe80::fc:ff:fe00:1","prefixlen":"64","scope":"link"}]}`},
		{"eth1", `{"up":false,"hwaddr":"52:54:00:12:34:56","inet":[{"address":"10.1.2.3","netmask":"255.255.0.0","broadcast":"10.1.255.255","label":"eth1"},{"address":"8.8.4.4","netmask":"255.255.255.255","broadcast":null,"label":"eth1"}],"secondary":[{"type":"inet","address":"10.1.9.9","netmask":"255.255.0.0","broadcast":"10.1.255.255","label":"eth1:1"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.iface, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, js(t, ifs.Value(tt.iface))); diff != "" {
				t.Error(diff)
			}
		})
	}
	if got := js(t, ifs.Value("vth1h1")); got != `{"up":true,"parent":"if2","hwaddr":"3a:ed:74:8d:9b:72"}` {
		t.Errorf("veth = %s", got)
	}
}

func TestAddressQueries(t *testing.T) {
	ifs := parseIPAddr(fixture(t, "ipaddr.txt"))
	tests := []struct {
		name string
		got  any
		want string
	}{
		{"ip_addrs", strs(ipAddrs(ifs, nil, false, "inet")), `["8.8.4.4","10.1.2.3","10.1.9.9","10.250.1.1","192.0.2.2"]`},
		{"ip_addrs loopback glob", strs(ipAddrs(ifs, "l*,eth0", true, "inet")), `["127.0.0.1","192.0.2.2"]`},
		{"ip_addrs list", strs(ipAddrs(ifs, []any{"eth1"}, false, "inet")), `["8.8.4.4","10.1.2.3","10.1.9.9"]`},
		{"ip_addrs6", strs(ipAddrs(ifs, "eth0", false, "inet6")), `["fd00::2","fe80::fc:ff:fe00:1"]`},
		{"cidr", inCIDR(ipAddrs(ifs, nil, false, "inet"), "10.0.0.0/8"), `["10.1.2.3","10.1.9.9","10.250.1.1"]`},
		{"subnets", subnets(ifs, nil, "inet"), `["8.8.4.4/32","10.1.0.0/16","10.250.1.0/24","192.0.2.0/24"]`},
		{"subnets one", subnets(ifs, "eth0", "inet"), `["192.0.2.0/24"]`},
		{"subnets6", subnets(ifs, nil, "inet6"), `["fd00::/64","fe80::/64"]`},
		{"networks", strs(networks(ifs, "lo", true, "inet")), `["127.0.0.0/8"]`},
		{"networks verbose", verboseNetworks(networks(ifs, "eth0", false, "inet")),
			`{"192.0.2.0/24":{"address":"192.0.2.0","netmask":"255.255.255.0","num_addresses":256,"prefixlen":24}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, js(t, tt.got)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestAddressFunctions(t *testing.T) {
	env := newEnv()
	ctx := context.Background()
	tests := []struct {
		fun  string
		args []any
		want any
	}{
		{"network.calc_net", []any{"172.17.0.5", "255.255.255.240"}, "172.17.0.0/28"},
		{"network.calc_net", []any{"2a02:f6e:a000:80:84d8:8332:7866:4e07/64"}, "2a02:f6e:a000:80::/64"},
		{"network.is_private", []any{"10.0.0.3"}, true},
		{"network.is_private", []any{"8.8.8.8"}, false},
		{"network.is_private", []any{"fe80::1"}, true},
		{"network.is_loopback", []any{"127.0.0.1"}, true},
		{"network.reverse_ip", []any{"172.17.0.4"}, "4.0.17.172.in-addr.arpa"},
		{"network.reverse_ip", []any{"::1"}, "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa"},
		{"network.iphexval", []any{"10.0.0.1"}, "0A000001"},
		{"network.ip_in_subnet", []any{"172.17.0.4", "172.16.0.0/12"}, true},
		{"network.ip_in_subnet", []any{"172.17.0.4", "bogus"}, false},
		{"network.in_subnet", []any{"240.0.0.0/30"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.fun, func(t *testing.T) {
			got, err := env.Run(ctx, tt.fun, tt.args, nil)
			if err != nil || !cmp.Equal(got, tt.want) {
				t.Errorf("%s%v = %v, %v; want %v", tt.fun, tt.args, got, err, tt.want)
			}
		})
	}
	cc, err := env.Run(ctx, "network.convert_cidr", []any{"172.31.0.0/16"}, nil)
	if err != nil || js(t, cc) != `{"network":"172.31.0.0","netmask":"255.255.0.0","broadcast":"172.31.255.255"}` {
		t.Errorf("convert_cidr = %s, %v", js(t, cc), err)
	}
}

func TestProcTables(t *testing.T) {
	owners := map[string]string{"1529": "42/sshd"}
	tcp := netstatEntries("tcp", parseSockets(fixture(t, "tcp")), owners)
	want := `[{"proto":"tcp","recv-q":"2","send-q":"0","local-address":"127.0.0.1:22","remote-address":"0.0.0.0:*","state":"LISTEN","user":"0","inode":"1529","program":"42/sshd"},` +
		`{"proto":"tcp","recv-q":"0","send-q":"3","local-address":"192.0.2.2:50708","remote-address":"203.0.113.80:443","state":"ESTABLISHED","user":"1000","inode":"77","program":"-"}]`
	if diff := cmp.Diff(want, js(t, tcp)); diff != "" {
		t.Error(diff)
	}
	udp6 := netstatEntries("udp6", parseSockets(fixture(t, "tcp6")), nil)
	if got := js(t, udp6); got != `[{"proto":"udp6","recv-q":"0","send-q":"0","local-address":"::1:22","remote-address":":::*","user":"0","inode":"20","program":"-"}]` {
		t.Errorf("udp6 = %s", got)
	}
	if got := js(t, activeTCP(fixture(t, "tcp"))); got != `{"0":{"local_addr":"192.0.2.2","local_port":50708,"remote_addr":"203.0.113.80","remote_port":443}}` {
		t.Errorf("active_tcp = %s", got)
	}
	r4 := js(t, parseRoute4(fixture(t, "route")))
	if want := `{"addr_family":"inet","destination":"0.0.0.0","gateway":"192.0.2.1","netmask":"0.0.0.0","flags":"UG","interface":"eth0"}`; r4[1:len(want)+1] != want {
		t.Errorf("route4 = %s", r4)
	}
	r6 := parseRoute6(fixture(t, "ipv6_route"))
	var def string
	for _, r := range r6 {
		if r.(*ordered.Map).Value("destination") == "::/0" {
			def = js(t, r)
		}
	}
	if def != `{"addr_family":"inet6","destination":"::/0","gateway":"fd00::1","netmask":"","flags":"UG","interface":"eth0"}` {
		t.Errorf("route6 default = %q in %s", def, js(t, r6))
	}
	if got := js(t, parseArp("? (192.0.2.1) at 52:54:00:aa:bb:cc [ether] on eth0\n")); got != `{"52:54:00:aa:bb:cc":"192.0.2.1"}` {
		t.Errorf("arp = %s", got)
	}
	if got := sanitizeHost("a.b;rm -rf /`x`"); got != "a.brm-rfx" {
		t.Errorf("sanitize = %q", got)
	}
}

func TestLive(t *testing.T) {
	env := newEnv()
	ctx := context.Background()
	ifs, err := env.Run(ctx, "network.interfaces", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	lo, _ := ifs.(*ordered.Map).Value("lo").(*ordered.Map)
	if lo == nil || js(t, lo.Value("inet"))[:25] != `[{"address":"127.0.0.1","` {
		t.Errorf("lo = %s", js(t, lo))
	}
	addrs, _ := env.Run(ctx, "network.ip_addrs", nil, ordered.FromPairs("include_loopback", true, "interface", "lo"))
	if js(t, addrs) != `["127.0.0.1"]` {
		t.Errorf("ip_addrs lo = %v", addrs)
	}
	if hw, _ := env.Run(ctx, "network.hwaddr", []any{"lo"}, nil); hw != "00:00:00:00:00:00" {
		t.Errorf("hwaddr lo = %v", hw)
	}
	if msg, _ := env.Run(ctx, "network.hw_addr", []any{"nope0"}, nil); msg.(string)[:28] != `Interface "nope0" not in ava` {
		t.Errorf("hw_addr nope0 = %v", msg)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	local := "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ns, err := env.Run(ctx, "network.netstat", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range ns.([]any) {
		m := r.(*ordered.Map)
		if m.Value("local-address") == local && m.Value("state") == "LISTEN" {
			found = true
			if p, _ := m.Value("program").(string); p != strconv.Itoa(os.Getpid())+"/"+comm(t) {
				t.Errorf("program = %q", p)
			}
		}
	}
	if !found {
		t.Errorf("netstat lacks listener %s", local)
	}
	if _, err := env.Run(ctx, "network.routes", nil, ordered.FromPairs("family", "ipx")); err == nil {
		t.Error("routes family=ipx did not fail")
	}
	if rs, err := env.Run(ctx, "network.routes", []any{"inet"}, nil); err != nil || rs == nil {
		t.Errorf("routes = %v, %v", rs, err)
	}
	if h, _ := env.Run(ctx, "network.get_hostname", nil, nil); h == "" {
		t.Error("empty hostname")
	}
}

func comm(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	return string(b[:len(b)-1])
}

func FuzzParsers(f *testing.F) {
	for _, n := range []string{"ipaddr.txt", "tcp", "tcp6", "route", "ipv6_route"} {
		b, _ := os.ReadFile("testdata/" + n)
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		parseIPAddr(s)
		parseSockets(s)
		parseRoute4(s)
		parseRoute6(s)
		parseArp(s)
		activeTCP(s)
		_, _ = parseNetwork(s)
	})
}
