package roster_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/roster"
	"github.com/google/go-cmp/cmp"
)

// TestScanCluster scans the /24 of a real test cluster and expects
// exactly its sshd hosts.
func TestScanCluster(t *testing.T) {
	// Scan needs the hosts on their own addresses.
	c := testhosts.New(t, 3, testhosts.WithMode(testhosts.ModeNetns))
	cfg := roster.Config{Options: roster.DefaultOptions(""), ScanTimeout: 2 * time.Second}
	r, err := roster.Open(context.Background(), "scan", cfg)
	if err != nil {
		t.Fatal(err)
	}
	subnet := fmt.Sprintf("10.250.%d.0/24", c.Number())
	ts, err := r.Targets(t.Context(), subnet, "glob")
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, x := range ts {
		if x.Host == c.ControllerIP() {
			continue // the bridge is this machine, which may run sshd itself
		}
		got = append(got, x.ID+" "+x.Addr())
	}
	for _, h := range c.Hosts() {
		want = append(want, h.IP+" "+h.Addr)
	}
	slices.Sort(want)
	slices.Sort(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("scan %s (-want +got):\n%s", subnet, d)
	}
}
