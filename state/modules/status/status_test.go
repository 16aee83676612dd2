package status

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/state/modules"
)

func env() *modules.Env {
	return (&modules.Env{Pillar: ordered.New(), Opts: ordered.New(),
		Registry: modules.Default, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}).WithGrains(ordered.FromPairs("kernel", "Linux"))
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParsers(t *testing.T) {
	tests := []struct {
		name  string
		parse func(string) *ordered.Map
		in    string
		want  string
	}{
		{"meminfo", parseMeminfo, "MemTotal:       16314248 kB\nHugePages_Total:       0\n",
			`{"MemTotal":{"value":"16314248","unit":"kB"},"HugePages_Total":{"value":"0"}}`},
		{"cpuinfo", parseCPUInfo, "processor\t: 0\nmodel name\t: Intel(R) X\nflags\t\t: fpu vme\n\nprocessor\t: 1\n",
			`{"processor":"1","model name":"Intel(R) X","flags":["fpu","vme"]}`},
		{"cpustats", parseCPUStats, "cpu  10 2 3 400 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 100 1 2\nctxt 55\nsoftirq 9 1\nbtime 1700000000\n",
			`{"cpu":{"idle":400,"iowait":5,"irq":6,"nice":2,"softirq":7,"steal":8,"system":3,"user":10},"cpu0":1,"intr":{"total":100,"irqs":[1,2]},"ctxt":55,"softirq":{"total":9,"softirqs":[1]},"btime":1700000000}`},
		{"diskstats", parseDiskstats, " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\nshort line\n",
			`{"sda":{"major":8,"minor":0,"device":"sda","reads_issued":1,"reads_merged":2,"sectors_read":3,"ms_spent_reading":4,"writes_completed":5,"writes_merged":6,"sectors_written":7,"ms_spent_writing":8,"io_in_progress":9,"ms_spent_in_io":10,"weighted_ms_spent_in_io":11}}`},
		{"vmstat", parseVMStat, "nr_free_pages 123\nodd x1\n", `{"nr_free_pages":123,"odd":"x1"}`},
		{"netdev", parseNetdev, "Inter-|   Receive\n face |bytes\n    lo:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",
			`{"lo":{"iface":"lo","rx_bytes":1,"rx_compressed":7,"rx_drop":4,"rx_errs":3,"rx_fifo":5,"rx_frame":6,"rx_multicast":8,"rx_packets":2,"tx_bytes":9,"tx_carrier":15,"tx_colls":14,"tx_compressed":16,"tx_drop":12,"tx_errs":11,"tx_fifo":13,"tx_packets":10}}`},
		{"netstats drops last column as Salt", parseNetstats, "TcpExt: A B C\nTcpExt: 1 2 3\nIpExt: X\nIpExt: 9\n",
			`{"TcpExt":{"A":1,"B":2},"IpExt":{}}`},
		{"ps", parsePs, "UID PID PPID C STIME TTY TIME CMD\nroot 1 0 0 Jan01 ? 00:00:01 /sbin/init splash\n",
			`{"1":{"user":"root","cmd":"/sbin/init splash"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, js(t, tt.parse(tt.in))); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestSmallHelpers(t *testing.T) {
	if got := js(t, parseW("root pts/0 10:00 1.00s 0.01s 0.00s w -fh\n")); got !=
		`[{"idle":"1.00s","jcpu":"0.01s","login":"10:00","pcpu":"0.00s","tty":"pts/0","user":"root","what":"w -fh"}]` {
		t.Errorf("w: %s", got)
	}
	ps := "UID PID CMD\nroot 10 sshd -D\nroot 11 nginx\nroot 12 sshd: me\n"
	if got := matchPids(ps, regexp.MustCompile("sshd"), "12"); got != "10" {
		t.Errorf("pid: %q", got)
	}
	if got := selectMounts("/dev/sda1 / ext4 rw 0 0\ntmpfs /run\\040x tmpfs rw 0 0\n", []string{"ext?"}); !cmp.Equal(got, []string{"/"}) {
		t.Errorf("mounts: %v", got)
	}
	if got := unescapeMount(`/a\040b\\c`); got != `/a b\\c` {
		t.Errorf("unescape: %q", got)
	}
	l, err := parseLoadavg("0.50 1.00 2.25 1/100 42\n")
	if err != nil || js(t, l) != `{"1-min":0.5,"5-min":1,"15-min":2.25}` {
		t.Errorf("loadavg: %v %v", js(t, l), err)
	}
	now := time.Date(2026, 1, 2, 10, 5, 0, 500000000, time.UTC)
	if got := js(t, uptimeAt(now, 90061)); got != `{"seconds":90061,"since_iso":"2026-01-01T09:03:59.500000","since_t":1767258239,"days":1,"time":"1:1"}` {
		t.Errorf("uptime: %s", got)
	}
}

func TestLive(t *testing.T) {
	e := env()
	ctx := context.Background()
	for _, fun := range []string{"status.uptime", "status.loadavg", "status.meminfo", "status.cpuinfo", "status.cpustats",
		"status.netdev", "status.version", "status.procs", "status.all_status"} {
		v, err := e.Run(ctx, fun, nil, nil)
		if err != nil || !modules.Truthy(v) {
			t.Errorf("%s = %v, %v", fun, v, err)
		}
	}
	n, _ := e.Run(ctx, "status.nproc", nil, nil)
	if n != runtime.NumCPU() {
		t.Errorf("nproc = %v", n)
	}
	du, err := e.Run(ctx, "status.diskusage", []any{"/"}, nil)
	if err != nil || !du.(*ordered.Map).Has("/") {
		t.Errorf("diskusage / = %v, %v", du, err)
	}
	p, _ := e.Run(ctx, "status.pid", []any{"^no-such-process-xyz$"}, nil)
	if p != "" {
		t.Errorf("pid = %q", p)
	}
	if _, err := os.Stat("/proc/self"); err != nil {
		testhosts.Skip(t, "no /proc")
	}
	up, _ := e.Run(ctx, "status.uptime", nil, nil)
	if s, _ := up.(*ordered.Map).Value("seconds").(int); s <= 0 {
		t.Errorf("uptime seconds = %v", s)
	}
}
