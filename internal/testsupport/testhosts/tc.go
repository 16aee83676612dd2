package testhosts

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// rateSyntax is what CapController accepts: a number and tc's unit.
var rateSyntax = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit)$`)

// CapController limits what the controller (the root namespace, sending
// through the cluster's bridge) sends to the hosts to rate, in tc's
// syntax ("200mbit"), to stand for a jump host's uplink; traffic between
// hosts is bridged port to port and stays uncapped. "" removes the cap.
// A token bucket (tc-tbf) on the bridge device does it; the cap goes with
// the bridge when the cluster closes. ModeNetns only.
func (c *Cluster) CapController(ctx context.Context, rate string) error {
	if c.st.Mode != ModeNetns {
		return fmt.Errorf("cap controller: %w", ErrUnsupported)
	}
	dev := bridgeName(c.st.Cluster)
	args := []string{"qdisc", "del", "dev", dev, "root"}
	if rate != "" {
		if !rateSyntax.MatchString(rate) {
			return fmt.Errorf("cap controller: rate %q is not like 200mbit", rate)
		}
		// The burst must hold a whole GSO segment (64 KiB) or the
		// bucket drops it; 1 MiB is a few milliseconds at these rates.
		args = []string{"qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate, "burst", "1mb", "latency", "100ms"}
	}
	out, err := exec.CommandContext(ctx, "tc", args...).CombinedOutput()
	if err != nil && !(rate == "" && strings.Contains(string(out), "No such file")) {
		return fmt.Errorf("cap controller: tc %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
