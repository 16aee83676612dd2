package coregrains

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

func fixture(t *testing.T, name, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name, file))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func TestOSData(t *testing.T) {
	tests := []struct {
		root string
		want map[string]any
	}{
		{"debian12", map[string]any{
			"os": "Debian", "os_family": "Debian", "osfullname": "Debian GNU/Linux", "osrelease": "12",
			"oscodename": "bookworm", "lsb_distrib_id": "Debian GNU/Linux", "lsb_distrib_release": "12",
			"lsb_distrib_codename": "bookworm",
			"osrelease_info":       []any{12}, "osmajorrelease": 12, "osfinger": "Debian-12",
		}},
		{"ubuntu2204", map[string]any{
			"os": "Ubuntu", "os_family": "Debian", "osfullname": "Ubuntu", "osrelease": "22.04",
			"oscodename": "jammy", "lsb_distrib_id": "Ubuntu", "lsb_distrib_release": "22.04",
			"lsb_distrib_codename": "jammy", "lsb_distrib_description": "Ubuntu 22.04.3 LTS",
			"osrelease_info": []any{22, 4}, "osmajorrelease": 22, "osfinger": "Ubuntu-22.04",
		}},
		{"rocky9", map[string]any{
			"os": "Rocky", "os_family": "RedHat", "osfullname": "Rocky Linux", "osrelease": "9.3",
			"oscodename": "Blue Onyx", "lsb_distrib_id": "Rocky Linux", "lsb_distrib_release": "9.3",
			"lsb_distrib_codename": "Blue Onyx",
			"osrelease_info":       []any{9, 3}, "osmajorrelease": 9, "osfinger": "Rocky Linux-9",
		}},
		{"alpine319", map[string]any{
			"os": "Alpine", "os_family": "Alpine", "osfullname": "Alpine Linux", "osrelease": "3.19.0",
			"oscodename": "Alpine Linux v3.19", "lsb_distrib_id": "Alpine Linux", "lsb_distrib_release": "3.19.0",
			"lsb_distrib_codename": "Alpine Linux v3.19",
			"osrelease_info":       []any{3, 19, 0}, "osmajorrelease": 3, "osfinger": "Alpine Linux-3",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.root, func(t *testing.T) {
			got := osData(fixture(t, tt.root, "etc/os-release"), fixture(t, tt.root, "etc/lsb-release"))
			for k, v := range osReleaseData(got["os"].(string), got["osfullname"].(string), got["osrelease"].(string)) {
				got[k] = v
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("os grains (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCPUAndMemory(t *testing.T) {
	tests := []struct {
		root string
		want map[string]any
	}{
		{"debian12", map[string]any{
			"num_cpus": 2, "cpu_model": "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz",
			"cpu_flags": []any{"fpu", "vme", "de", "pse", "hypervisor"},
		}},
		{"alpine319", map[string]any{
			"num_cpus": 2, "cpu_model": "Unknown",
			"cpu_flags": []any{"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "cpuid"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.root, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, cpuData(fixture(t, tt.root, "proc/cpuinfo"))); diff != "" {
				t.Errorf("cpu (-want +got):\n%s", diff)
			}
		})
	}
	want := map[string]any{"mem_total": 3933, "swap_total": 1023}
	if diff := cmp.Diff(want, memData(fixture(t, "debian12", "proc/meminfo"))); diff != "" {
		t.Errorf("mem (-want +got):\n%s", diff)
	}
}

func TestKernelParamsAndResolv(t *testing.T) {
	got := kernelParams(fixture(t, "debian12", "proc/cmdline"))
	want := []any{
		[]any{"BOOT_IMAGE", "/boot/vmlinuz-6.1.0-13-amd64"},
		[]any{"root", nil}, // root=UUID=abc splits in three: Salt gives no value
		[]any{"ro", nil}, []any{"quiet", nil}, []any{"console", "ttyS0,115200"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kernelparams (-want +got):\n%s", diff)
	}
	dns := parseResolv(fixture(t, "debian12", "etc/resolv.conf"))
	wantDNS := map[string]any{
		"nameservers":     []any{"192.0.2.53", "2001:db8::53"},
		"ip4_nameservers": []any{"192.0.2.53"},
		"ip6_nameservers": []any{"2001:db8::53"},
		"sortlist":        []any{"130.155.160.0/255.255.240.0", "130.155.0.0/255.255.0.0"},
		"domain":          "example.com",
		"search":          []any{"example.com", "corp.example.com"},
		"options":         []any{"edns0"},
	}
	if diff := cmp.Diff(wantDNS, dns); diff != "" {
		t.Errorf("dns (-want +got):\n%s", diff)
	}
}

func TestGatherFixtureRoot(t *testing.T) {
	g, err := Gather(context.Background(), GatherOptions{
		Root: "testdata/debian12",
		Opts: ordered.FromPairs("id", "web1", "grains", ordered.FromPairs("role", "db")),
	})
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]any{
		"id": "web1", "os": "Debian", "osfinger": "Debian-12", "num_cpus": 2, "mem_total": 3933,
		"machine_id": "0123456789abcdef0123456789abcdef", "manufacturer": "QEMU",
		"biosversion": "1.16.2-debian-1.16.2-1", "uuid": "abcd-ef", "virtual": "kvm", "role": "db",
		"server_id": 1826842219, // Python: abs(int(sha256(b"web1").hexdigest(), 16) % 2**31)
	}
	for k, want := range checks {
		if got := g.Value(k); !cmp.Equal(want, got) {
			t.Errorf("grain %s = %#v, want %#v", k, got, want)
		}
	}
}

func TestGatherLive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("core grains are Linux-only")
	}
	g, err := Gather(context.Background(), GatherOptions{Opts: ordered.FromPairs("id", "live"), SkipCustom: true})
	if err != nil {
		t.Fatal(err)
	}
	uname := func(flag string) string {
		out, err := exec.Command("uname", flag).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	checks := map[string]any{
		"num_cpus":      runtime.NumCPU(),
		"kernelrelease": uname("-r"),
		"kernel":        uname("-s"),
		"cpuarch":       uname("-m"),
		"nodename":      uname("-n"),
		"localhost":     host,
		"pid":           os.Getpid(),
		"uid":           os.Getuid(),
		"cwd":           wd,
		"id":            "live",
		"saltversion":   "3006.19",
	}
	for k, want := range checks {
		if got := g.Value(k); !cmp.Equal(want, got) {
			t.Errorf("grain %s = %#v, want %#v", k, got, want)
		}
	}
	// ipv4 is ip_addrs(include_loopback=True): loopback included. Its
	// order against Salt is TestIPGrainsMatchSalt's, on synthetic
	// tables, since this host's other interfaces are not the test's.
	ipv4, _ := g.Value("ipv4").([]any)
	if !slices.Contains(ipv4, any("127.0.0.1")) {
		t.Errorf("ipv4 = %v, want a list with 127.0.0.1", ipv4)
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil && strings.Contains(string(b), "ID=debian") && strings.Contains(string(b), `VERSION_ID="12"`) {
		for k, want := range map[string]any{"os": "Debian", "os_family": "Debian", "osfinger": "Debian-12",
			"osrelease_info": []any{12}, "oscodename": "bookworm"} {
			if got := g.Value(k); !cmp.Equal(want, got) {
				t.Errorf("grain %s = %#v, want %#v", k, got, want)
			}
		}
	}
}

func BenchmarkGather(b *testing.B) {
	ctx := context.Background()
	opts := GatherOptions{Opts: ordered.FromPairs("id", "bench")}
	for b.Loop() {
		if _, err := Gather(ctx, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func TestGrainsCache(t *testing.T) {
	dir := t.TempDir()
	opts := GatherOptions{Root: "testdata/debian12", Opts: ordered.FromPairs("id", "c1", "grains_cache", true, "cachedir", dir)}
	first, err := Gather(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, cacheFile)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	// A cached gather must not read the fixture again: point Root
	// elsewhere and expect the cached values.
	opts.Root = t.TempDir()
	second, err := Gather(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if second.Value("os") != "Debian" || second.Value("mem_total") != first.Value("mem_total") {
		t.Errorf("cached grains differ: os=%v mem=%v", second.Value("os"), second.Value("mem_total"))
	}
	opts.Opts.Set("grains_cache_expiration", 0)
	third, err := Gather(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if third.Value("os") == "Debian" {
		t.Errorf("expired cache was used")
	}
}
