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

// setupBridge creates cluster c's bridge with the .1 address.
func setupBridge(ctx context.Context, c int) error {
	return ipBatch(ctx, []string{
		"link add " + bridgeName(c) + " type bridge",
		"addr add " + bridgeIP(c) + "/24 dev " + bridgeName(c),
		"link set " + bridgeName(c) + " up",
	})
}

// setupHostLinks creates the network namespaces of hosts 1..n and their veth
// pairs (the namespace end is named eth0), attached to the bridge.
func setupHostLinks(ctx context.Context, c, n int) error {
	var lines []string
	for i := 1; i <= n; i++ {
		lines = append(lines,
			"netns add "+netnsName(c, i),
			fmt.Sprintf("link add %s type veth peer name eth0 netns %s", vethName(c, i), netnsName(c, i)),
			fmt.Sprintf("link set %s master %s up", vethName(c, i), bridgeName(c)),
		)
	}
	return ipBatch(ctx, lines)
}

// setupHostAddr configures host i's side: loopback and eth0 with its
// address. There is deliberately no default route: a host reaches the
// controller and the other hosts on its /24 and nothing else, so no test
// can send traffic anywhere but the harness's own addresses.
func setupHostAddr(ctx context.Context, c, i int) error {
	return ipBatch(ctx, []string{
		"link set lo up",
		fmt.Sprintf("addr add %s/24 dev eth0", hostIP(c, i)),
		"link set eth0 up",
	}, "-n", netnsName(c, i))
}
