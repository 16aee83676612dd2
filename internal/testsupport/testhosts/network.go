package testhosts

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// ipCmd runs one `ip` command.
func ipCmd(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// ipBatch runs many `ip` commands in one process (ip -batch), prefixed with
// global options such as "-n NS".
func ipBatch(ctx context.Context, lines []string, global ...string) error {
	args := append(append([]string{}, global...), "-batch", "-")
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// setupBridge creates cluster c's bridge with the .1 address and a fixed
// MAC: a bridge without one takes the lowest MAC of its ports, and every
// change of it flushes the bridge's neighbour table, permanent entries
// included (neigh_changeaddr), which would undo setupHostLinks's entries
// while the hosts' veths are added.
func setupBridge(ctx context.Context, c int) error {
	return ipBatch(ctx, []string{
		fmt.Sprintf("link add %s address %s type bridge", bridgeName(c), bridgeMAC(c)),
		fmt.Sprintf("addr add %s/%d dev %s", bridgeIP(c), prefixLen(c), bridgeName(c)),
		"link set " + bridgeName(c) + " up",
	})
}

// setupHostLinks creates the network namespaces of the hosts and their
// veth pairs (the namespace end is named eth0, with a fixed MAC):
// attached to the bridge, or for a host behind another, with the other end
// moved into that host's namespace. A bridge host also gets a permanent
// neighbour entry on the bridge: the controller's neighbour table is the
// machine's, whose gc_thresh3 (1024 by default) a large cluster would
// fill with dynamic entries, and permanent ones are not counted (Linux ≥
// 4.19) nor ever resolved again, so a thousand hosts cost no ARP at all.
func setupHostLinks(ctx context.Context, c int, hosts []*hostState) error {
	var lines []string
	for _, h := range hosts {
		lines = append(lines, "netns add "+netnsName(c, h.Index))
	}
	for _, h := range hosts {
		i := h.Index
		lines = append(lines, fmt.Sprintf("link add %s type veth peer name eth0 address %s netns %s",
			vethName(c, i), hostMAC(c, i), netnsName(c, i)))
		if front := h.Options.BehindHost; front != "" {
			lines = append(lines, fmt.Sprintf("link set %s netns %s", vethName(c, i), netnsName(c, hostIndex(front))))
			continue
		}
		lines = append(lines, fmt.Sprintf("link set %s master %s up", vethName(c, i), bridgeName(c)),
			fmt.Sprintf("neigh replace %s lladdr %s dev %s nud permanent", hostIP(c, i), hostMAC(c, i), bridgeName(c)))
	}
	return ipBatch(ctx, lines)
}

// setupBehindAddr configures a host behind host j: its address alone on
// eth0 with a route to j only, and in j the route back over the link. No
// forwarding is enabled anywhere, so only j can talk to it.
func setupBehindAddr(ctx context.Context, c, i, j int) error {
	err := ipBatch(ctx, []string{
		"link set lo up",
		fmt.Sprintf("addr add %s/32 dev eth0", hostIP(c, i)),
		"link set eth0 up",
		fmt.Sprintf("route add %s/32 dev eth0", hostIP(c, j)),
	}, "-n", netnsName(c, i))
	if err != nil {
		return err
	}
	return ipBatch(ctx, []string{
		fmt.Sprintf("link set %s up", vethName(c, i)),
		fmt.Sprintf("route add %s/32 dev %s", hostIP(c, i), vethName(c, i)),
	}, "-n", netnsName(c, j))
}

// setupHostAddr configures host i's side: loopback and eth0 with its
// address, and permanent neighbour entries for the controller and for
// every other host on the bridge (peers, by index). There is deliberately
// no default route: a host reaches the controller and the other hosts on
// its /24 and nothing else, so no test can send traffic anywhere but the
// harness's own addresses.
//
// The entries matter past a few dozen hosts: every namespace's dynamic
// neighbour entries count against the one machine-wide gc_thresh3 (1024
// by default), so hosts that talk to each other (the relay's peer
// fetches) overflow it at about 32 hosts all to all, and a SYN whose
// neighbour cannot be created is dropped: "dial tcp: i/o timeout" with
// "neighbor table overflow!" in the kernel log. Permanent entries are not
// counted (Linux ≥ 4.19) nor resolved by ARP.
func setupHostAddr(ctx context.Context, c, i int, peers []int) error {
	lines := []string{
		"link set lo up",
		fmt.Sprintf("addr add %s/%d dev eth0", hostIP(c, i), prefixLen(c)),
		"link set eth0 up",
		fmt.Sprintf("neigh replace %s lladdr %s dev eth0 nud permanent", bridgeIP(c), bridgeMAC(c)),
	}
	for _, j := range peers {
		if j != i {
			lines = append(lines, fmt.Sprintf("neigh replace %s lladdr %s dev eth0 nud permanent", hostIP(c, j), hostMAC(c, j)))
		}
	}
	return ipBatch(ctx, lines, "-n", netnsName(c, i))
}
