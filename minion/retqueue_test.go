package minion

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
)

func drain(q *returnQueue) []string {
	var got []string
	for l := q.peek(); l != nil; l = q.peek() {
		got = append(got, fmt.Sprint(l.Value("jid")))
		q.pop()
	}
	return got
}

// TestReturnQueueSpill: past its memory bound the queue spills to disk,
// delivers in order, and what is left at shutdown is delivered by the
// next run, before anything the next run makes.
func TestReturnQueueSpill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "q")
	log := slog.New(slog.DiscardHandler)
	q := newReturnQueue(dir, log)
	q.max = 2
	ctx := context.Background()
	for i := range 5 {
		q.push(ctx, ordered.FromPairs("jid", fmt.Sprint(i)))
	}
	if n := len(q.mem); n != 2 {
		t.Fatalf("%d returns in memory, want 2", n)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Fatalf("%d returns on disk, want 3", len(ents))
	}
	if q.peek().Value("jid") != "0" {
		t.Fatal("oldest return is not first")
	}
	q.pop()
	q.persist() // the minion stops with 4 undelivered
	q2 := newReturnQueue(dir, log)
	q2.restore()
	q2.push(ctx, ordered.FromPairs("jid", "new"))
	if d := cmp.Diff([]string{"1", "2", "3", "4", "new"}, drain(q2)); d != "" {
		t.Fatal(d)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("%d files left after delivery", len(ents))
	}
}

// TestReturnQueueCorrupt: a file that is not a return is set aside,
// named, and the rest is delivered.
func TestReturnQueueCorrupt(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.p", 1)), []byte("\xc1garbage"), 0o600)
	q := newReturnQueue(dir, slog.New(slog.DiscardHandler))
	q.restore()
	q.push(context.Background(), ordered.FromPairs("jid", "ok"))
	if d := cmp.Diff([]string{"ok"}, drain(q)); d != "" {
		t.Fatal(d)
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%020d.p.bad", 1))); err != nil {
		t.Fatal("corrupt file not set aside")
	}
}

// TestReturnQueueNoDisk: without a disk a full queue makes the
// producer wait until a return is delivered.
func TestReturnQueueNoDisk(t *testing.T) {
	q := newReturnQueue("", slog.New(slog.DiscardHandler))
	q.max = 1
	ctx := context.Background()
	q.push(ctx, ordered.FromPairs("jid", "a"))
	done := make(chan struct{})
	go func() { q.push(ctx, ordered.FromPairs("jid", "b")); close(done) }()
	select {
	case <-done:
		t.Fatal("push past the bound did not wait")
	default:
	}
	q.pop()
	<-done
	if d := cmp.Diff([]string{"b"}, drain(q)); d != "" {
		t.Fatal(d)
	}
}

func TestParseMaster(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "salt", want: "salt:4506"},
		{in: "10.0.0.1:5506", want: "10.0.0.1:5506"},
		{in: "m1.example:4510", want: "m1.example:4510"},
		{in: "::1", want: "[::1]:4506"},
		{in: "[fe80::1]:4600", want: "[fe80::1]:4600"},
		{in: "[fe80::1]", want: "[fe80::1]:4506"},
		{in: "host:0", bad: true},
		{in: "host:x", bad: true},
		{in: ":4506", bad: true},
		{in: "", bad: true},
	} {
		e, err := parseMaster(tc.in, 4506)
		if (err != nil) != tc.bad {
			t.Errorf("%q: err = %v", tc.in, err)
			continue
		}
		if !tc.bad && e.String() != tc.want {
			t.Errorf("%q = %s, want %s", tc.in, e, tc.want)
		}
	}
}

// TestMasterURIFormat: with master_uri_format ip_only a master entry
// is the address alone (with master_port), never split; a host:port or
// bracketed entry is refused naming the option, and an unknown format is
// refused (salt/minion.py prep_ip_port).
func TestMasterURIFormat(t *testing.T) {
	for _, tc := range []struct {
		format  string
		masters []string
		want    string
		err     string
	}{
		{"default", []string{"10.0.0.1:5506", "fe80::1"}, "[10.0.0.1:5506 [fe80::1]:4506]", ""},
		{"ip_only", []string{"10.0.0.1", "2001:db8::4506", "salt.example"}, "[10.0.0.1:4506 [2001:db8::4506]:4506 salt.example:4506]", ""},
		{"ip_only", []string{"10.0.0.1:5506"}, "", "master_uri_format is ip_only"},
		{"ip_only", []string{"[::1]"}, "", "master_uri_format is ip_only"},
		{"ip-only", []string{"salt"}, "", `master_uri_format "ip-only": want default or ip_only`},
	} {
		c := &config.Minion{File: "/etc/salt/minion", Masters: tc.masters, MasterPort: 4506, MasterURIFormat: tc.format}
		l, err := masterList(c)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "/etc/salt/minion") {
				t.Errorf("%s %v: err %v, want %q", tc.format, tc.masters, err, tc.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(l) != tc.want {
			t.Errorf("%s %v: %v %v, want %s", tc.format, tc.masters, l, err, tc.want)
		}
	}
}

func FuzzParseMaster(f *testing.F) {
	for _, s := range []string{"salt", "1.2.3.4:4506", "[::1]:1", "::1", "a:b:c", "", "[x]:", "h:65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// ip_only entries parse back the same and keep master_port.
		if ipOnly, err := parseMasterIPOnly(s, 4506); err == nil {
			back, err := parseMaster(ipOnly.String(), 4506)
			if ipOnly.port != 4506 || err != nil || back != ipOnly {
				t.Fatalf("ip_only %q parsed to %+v (%v)", s, ipOnly, err)
			}
		}
		e, err := parseMaster(s, 4506)
		if err != nil {
			return
		}
		if e.host == "" || e.port <= 0 || e.port > 65535 {
			t.Fatalf("%q parsed to %+v", s, e)
		}
		again, err := parseMaster(e.String(), 4506)
		if err != nil || again != e {
			t.Fatalf("%q: %s does not parse back (%+v, %v)", s, e, again, err)
		}
	})
}
