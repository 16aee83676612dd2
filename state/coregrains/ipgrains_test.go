package coregrains

import (
	"encoding/json"
	"net/netip"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// saltIPCases is testdata/salt3006_ip/cases.json, written by gen.py
// there with Salt 3006.19's own parser and grain functions.
type saltIPCases struct {
	Cases []struct {
		Name       string
		Interfaces []struct {
			Name   string
			Hwaddr string
			Addrs  [][4]any // family, address, prefix length, secondary
		}
		Grains map[string]any
	}
}

// TestIPGrainsMatchSalt feeds synthetic interface tables to ipGrains
// and compares with what Salt 3006 computed from the same tables
// rendered as `ip addr show`: ipv4/ipv6 sorted as ipaddress objects
// (10.77.0.1 before 10.250.0.1), secondary IPv4 addresses last in
// ip_interfaces, Python's and inet_ntop's spellings of mapped and
// compatible IPv6 addresses.
func TestIPGrainsMatchSalt(t *testing.T) {
	b, err := os.ReadFile("testdata/salt3006_ip/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref saltIPCases
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range ref.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var ifs []iface
			for _, in := range c.Interfaces {
				f := iface{name: in.Name, hwaddr: in.Hwaddr}
				for _, a := range in.Addrs {
					var flags uint32
					if a[3].(bool) {
						flags = ifaFSecondary
					}
					f.add(ifAddr{ip: netip.MustParseAddr(a[1].(string)), flags: flags})
				}
				ifs = append(ifs, f)
			}
			if d := cmp.Diff(c.Grains, ipGrains(ifs)); d != "" {
				t.Errorf("grains (-salt +brine):\n%s", d)
			}
		})
	}
}
