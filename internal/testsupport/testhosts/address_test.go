package testhosts

import (
	"net"
	"testing"
)

// TestAddressPlan checks every cluster number's addressing: the hosts of
// a full cluster have distinct addresses and MACs inside the cluster's
// subnet, none of them the network, broadcast or bridge address, and
// no two clusters' subnets overlap.
func TestAddressPlan(t *testing.T) {
	var subnets []*net.IPNet
	for c := 1; c <= maxClusters; c++ {
		_, sn, err := net.ParseCIDR(subnetOf(c))
		if err != nil {
			t.Fatalf("cluster %d: %v", c, err)
		}
		for _, o := range subnets {
			if o.Contains(sn.IP) || sn.Contains(o.IP) {
				t.Fatalf("cluster %d's %s overlaps %s", c, sn, o)
			}
		}
		subnets = append(subnets, sn)
		n := maxSmallHosts
		if isLarge(c) {
			n = MaxHosts
		}
		bridge := net.ParseIP(bridgeIP(c))
		if !sn.Contains(bridge) {
			t.Fatalf("cluster %d: bridge %s outside %s", c, bridge, sn)
		}
		bcast := make(net.IP, 4)
		for i := range bcast {
			bcast[i] = sn.IP.To4()[i] | ^sn.Mask[i]
		}
		seenIP, seenMAC := map[string]bool{bridge.String(): true}, map[string]bool{bridgeMAC(c): true}
		for i := 1; i <= n; i++ {
			ip := net.ParseIP(hostIP(c, i))
			if ip == nil || !sn.Contains(ip) || ip.Equal(sn.IP) || ip.Equal(bcast) || seenIP[ip.String()] {
				t.Fatalf("cluster %d host %d: address %s (subnet %s, seen before: %v)", c, i, hostIP(c, i), sn, seenIP[ip.String()])
			}
			if _, err := net.ParseMAC(hostMAC(c, i)); err != nil || seenMAC[hostMAC(c, i)] {
				t.Fatalf("cluster %d host %d: MAC %s: %v", c, i, hostMAC(c, i), err)
			}
			seenIP[ip.String()], seenMAC[hostMAC(c, i)] = true, true
		}
		if len(vethName(c, n)) > 15 {
			t.Fatalf("cluster %d: interface name %s longer than IFNAMSIZ-1", c, vethName(c, n))
		}
	}
}
