package coregrains

import (
	"net"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAddrsByIndexMatchesNet checks the one-dump address table against
// net.Interface.Addrs on this host's real interfaces (on the test
// machine, a hundred of them with IPv4, IPv6 and link-local addresses).
func TestAddrsByIndexMatchesNet(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	byIndex, err := addrsByIndex()
	if err != nil {
		t.Skipf("no one-dump address table here: %v", err)
	}
	total := 0
	for _, it := range ifs {
		want := ifaceAddrs(it)
		got := byIndex[it.Index]
		total += len(got)
		var gotIPs []netip.Addr
		for _, a := range got {
			gotIPs = append(gotIPs, a.ip)
		}
		var wantIPs []netip.Addr
		for _, a := range want {
			wantIPs = append(wantIPs, a.ip)
		}
		if d := cmp.Diff(wantIPs, gotIPs, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); d != "" {
			t.Errorf("%s (index %d) addresses (-net +one dump):\n%s", it.Name, it.Index, d)
		}
	}
	if total == 0 {
		t.Fatal("no addresses at all: not even loopback's")
	}
}
