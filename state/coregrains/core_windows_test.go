package coregrains

import (
	"context"
	"os"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// TestWindowsGrains gathers the core grains of the Windows host this
// runs on (Wine in `make test`) and checks the ones Salt's targeting
// relies on.
func TestWindowsGrains(t *testing.T) {
	g, err := Gather(context.Background(), GatherOptions{Opts: ordered.FromPairs("id", "win1"), SkipCustom: true})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"os": "Windows", "os_family": "Windows", "kernel": "Windows",
		"init": "Windows", "ps": "tasklist.exe", "osmanufacturer": "Microsoft Corporation", "minion_mode": "session", "id": "win1"} {
		if got := g.Value(k); got != want {
			t.Errorf("grain %s = %v, want %v", k, got, want)
		}
	}
	for _, k := range []string{"osrelease", "osversion", "osfullname", "kernelrelease", "cpuarch", "nodename", "timezone"} {
		if s, _ := g.Value(k).(string); s == "" {
			t.Errorf("grain %s = %v, want a string", k, g.Value(k))
		}
	}
	if n, _ := g.Value("num_cpus").(int); n < 1 {
		t.Errorf("num_cpus = %v", g.Value("num_cpus"))
	}
	if n, _ := g.Value("mem_total").(int); n < 1 {
		t.Errorf("mem_total = %v", g.Value("mem_total"))
	}
	host, _ := os.Hostname()
	if g.Value("nodename") != host {
		t.Errorf("nodename = %v, want %s", g.Value("nodename"), host)
	}
	if g.Value("uid") != nil || g.Has("gid") {
		t.Errorf("uid/gid grains on Windows: %v %v", g.Value("uid"), g.Value("gid"))
	}
	if _, ok := g.Value("ipv4").([]any); !ok {
		t.Errorf("ipv4 = %v", g.Value("ipv4"))
	}
	if g.Value("windowsdomaintype") == nil {
		t.Errorf("windowsdomaintype is None")
	}
}
