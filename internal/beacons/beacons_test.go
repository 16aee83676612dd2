package beacons

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// yamlConfig reads a beacons: mapping written as in a minion config.
func yamlConfig(t *testing.T, src string) *ordered.Map {
	t.Helper()
	v, err := saltyaml.Load([]byte(src), "test")
	if err != nil {
		t.Fatal(err)
	}
	return v.(*ordered.Map).Value("beacons").(*ordered.Map)
}

func eventsOf(evs []any) []*ordered.Map {
	out := make([]*ordered.Map, len(evs))
	for i, e := range evs {
		out[i] = e.(*ordered.Map)
	}
	return out
}

func TestParseEvents(t *testing.T) {
	var buf bytes.Buffer
	for _, e := range []struct {
		wd   int32
		mask uint32
		name string
	}{{1, 2, ""}, {3, 0x40000100, "sub"}} {
		n := 0
		if e.name != "" {
			n = 16
		}
		binary.Write(&buf, binary.NativeEndian, []uint32{uint32(e.wd), e.mask, 0, uint32(n)})
		name := make([]byte, n)
		copy(name, e.name)
		buf.Write(name)
	}
	evs, err := parseEvents(buf.Bytes())
	if err != nil || len(evs) != 2 || evs[1].name != "sub" || maskName(evs[1].mask) != "IN_CREATE|IN_ISDIR" || maskName(evs[0].mask) != "IN_MODIFY" {
		t.Fatalf("%+v %v", evs, err)
	}
	if _, err := parseEvents(buf.Bytes()[:20]); !errors.Is(err, errShortEvent) {
		t.Fatalf("truncated: %v", err)
	}
}

func FuzzParseEvents(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 'a', 'b', 0, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, _ := parseEvents(b)
		for _, e := range evs {
			_ = maskName(e.mask)
		}
	})
}

func TestBadConfigReportedOnceOthersRun(t *testing.T) {
	var logs bytes.Buffer
	loadAvg = func() ([]float64, error) { return []float64{3, 2, 1}, nil }
	t.Cleanup(func() { loadAvg = readLoadAvg })
	m := New(Options{Env: &Env{ID: "m1"}, Log: slog.New(slog.NewTextHandler(&logs, nil)), Beacons: yamlConfig(t, `
beacons:
  inotify:
    - files: not-a-dict
  nosuch:
    - x: 1
  load:
    - averages: {1m: [0, 2], 5m: [0, 5], 15m: [0, 5]}
`)})
	for range 3 {
		evs := eventsOf(m.Process(t.Context()))
		if len(evs) != 1 || evs[0].Value("tag") != "salt/beacon/m1/load/" {
			t.Fatalf("events %v", evs)
		}
		d := evs[0].Value("data").(*ordered.Map)
		if strings.Join(d.StringKeys(), ",") != "1m,5m,15m,id" || d.Value("1m") != 3.0 {
			t.Fatalf("load data %v", d)
		}
	}
	if n := strings.Count(logs.String(), "Beacon inotify configuration invalid, not running."); n != 1 {
		t.Fatalf("bad inotify config reported %d times:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "Unable to process beacon nosuch"); n != 1 {
		t.Fatalf("unknown beacon reported %d times", n)
	}
}

func TestIntervalEnabledRunOnce(t *testing.T) {
	memPercent = func() (float64, error) { return 70.5, nil }
	t.Cleanup(func() { memPercent = readMemPercent })
	m := New(Options{Env: &Env{ID: "m1"}, LoopInterval: time.Second, Beacons: yamlConfig(t, `
beacons:
  memusage:
    - percent: 63%
    - interval: 3
  mem2:
    - beacon_module: memusage
    - percent: 99%
  mem3:
    - beacon_module: memusage
    - percent: 10
    - run_once: True
`)})
	var fired []string
	for range 7 {
		for _, e := range eventsOf(m.Process(t.Context())) {
			fired = append(fired, e.Value("tag").(string))
			if e.Value("data").(*ordered.Map).Value("memusage") != 70.5 {
				t.Fatalf("memusage data %v", e)
			}
		}
	}
	want := "salt/beacon/m1/mem3/ salt/beacon/m1/memusage/ salt/beacon/m1/memusage/"
	if strings.Join(fired, " ") != want {
		t.Fatalf("fired %v, want %s", fired, want)
	}
	if ok, _ := m.SetBeaconEnabled("memusage", false); !ok || len(m.Process(t.Context())) != 0 {
		t.Fatal("disabled beacon still fires")
	}
	m.SetEnabled(false)
	if m.Process(t.Context()) != nil {
		t.Fatal("beacons disabled globally still fire")
	}
}

func TestStateRunClosesBeacon(t *testing.T) {
	running := true
	memPercent = func() (float64, error) { return 90, nil }
	t.Cleanup(func() { memPercent = readMemPercent })
	m := New(Options{Env: &Env{ID: "m1"}, StateRunning: func() bool { return running }, Beacons: yamlConfig(t, `
beacons:
  memusage: [{percent: 1}, {disable_during_state_run: True}]
`)})
	if len(m.Process(t.Context())) != 0 {
		t.Fatal("fired during a state run")
	}
	running = false
	if len(m.Process(t.Context())) != 1 {
		t.Fatal("no event after the state run")
	}
}

func TestDiskusage(t *testing.T) {
	mountPoints = func() ([]string, error) { return []string{"/", "/home", "/mnt/a b"}, nil }
	diskPercent = func(p string) (float64, error) {
		return map[string]float64{"/": 70, "/home": 10, "/mnt/a b": 55}[p], nil
	}
	t.Cleanup(func() { mountPoints, diskPercent = readMountPoints, readDiskPercent })
	b := diskusageBeacon{}
	cfg := []any{ordered.FromPairs("/", "63%"), ordered.FromPairs("/mnt/.*", 50)}
	if msg := b.Validate(cfg); msg != "" {
		t.Fatal(msg)
	}
	evs, _ := b.Beacon(t.Context(), &Env{}, cfg)
	if len(evs) != 2 || evs[0].Value("mount") != "/" || evs[0].Value("diskusage") != 70.0 || evs[1].Value("mount") != "/mnt/a b" {
		t.Fatalf("%v", evs)
	}
	if msg := b.Validate([]any{ordered.FromPairs(`^\/(?!home).*$`, "90%")}); !strings.Contains(msg, "not supported") {
		t.Fatalf("lookahead: %q", msg)
	}
}

func TestLoadOnChange(t *testing.T) {
	avgs := []float64{1, 1, 1}
	loadAvg = func() ([]float64, error) { return avgs, nil }
	t.Cleanup(func() { loadAvg = readLoadAvg })
	b := &loadBeacon{}
	cfg := []any{ordered.FromPairs("averages", ordered.FromPairs("1m", []any{0.0, 2.0}, "5m", []any{0.0, 2.0}, "15m", []any{0.0, 2.0})),
		ordered.FromPairs("onchangeonly", true), ordered.FromPairs("emitatstartup", false)}
	var n []int
	for _, a := range [][]float64{{1, 1, 1}, {3, 1, 1}, {3.5, 1, 1}, {1, 1, 1}} {
		avgs = a
		evs, _ := b.Beacon(t.Context(), &Env{}, cfg)
		n = append(n, len(evs))
	}
	if n[0] != 0 || n[1] != 1 || n[2] != 0 || n[3] != 0 {
		t.Fatalf("onchangeonly events per pass %v, want [0 1 0 0]", n)
	}
}

func TestServiceAndStatus(t *testing.T) {
	up := true
	env := &Env{ID: "m1", Call: func(_ context.Context, fun string, args ...any) (any, error) {
		switch fun {
		case "service.status":
			return up, nil
		case "status.loadavg":
			return ordered.FromPairs("1-min", 0.5, "5-min", 0.2, "15-min", 0.1), nil
		}
		return nil, errors.New("'" + fun + "' is not available.")
	}}
	s := &serviceBeacon{last: map[string]*serviceLast{}}
	cfg := []any{ordered.FromPairs("services", ordered.FromPairs("nginx", ordered.FromPairs("onchangeonly", true, "uncleanshutdown", "/nonexistent.pid")))}
	if msg := s.Validate(cfg); msg != "" {
		t.Fatal(msg)
	}
	evs, _ := s.Beacon(t.Context(), env, cfg)
	if len(evs) != 1 || evs[0].Value("service_name") != "nginx" || evs[0].Value("tag") != "nginx" || evs[0].Value("nginx").(*ordered.Map).Value("running") != true {
		t.Fatalf("service %v", evs)
	}
	if evs, _ = s.Beacon(t.Context(), env, cfg); len(evs) != 0 {
		t.Fatalf("unchanged service fired %v", evs)
	}
	up = false
	evs, _ = s.Beacon(t.Context(), env, cfg)
	if len(evs) != 1 || evs[0].Value("nginx").(*ordered.Map).Value("uncleanshutdown") != false {
		t.Fatalf("stopped service %v", evs)
	}
	st := statusBeacon{}
	evs, _ = st.Beacon(t.Context(), env, []any{ordered.FromPairs("loadavg", []any{"1-min", "nope"}, "time", "all")})
	data := evs[0].Value("data").(*ordered.Map)
	if data.Value("loadavg") != "Status beacon is incorrectly configured: 'nope'" || data.Value("time").(*ordered.Map).Len() != 0 {
		t.Fatalf("status %v", data)
	}
	evs, _ = st.Beacon(t.Context(), env, []any{ordered.FromPairs("loadavg", []any{"5-min"})})
	if evs[0].Value("data").(*ordered.Map).Value("loadavg").(*ordered.Map).Value("5-min") != 0.2 {
		t.Fatalf("status item %v", evs[0])
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000000", evs[0].Value("tag").(string)); err != nil {
		t.Fatalf("status tag %v", evs[0].Value("tag"))
	}
}

func utmpRecord(typ int16, pid int32, line, user, host string) []byte {
	rec := make([]byte, utmpSize)
	binary.NativeEndian.PutUint16(rec[0:], uint16(typ))
	binary.NativeEndian.PutUint32(rec[4:], uint32(pid))
	copy(rec[8:40], line)
	copy(rec[44:76], user)
	copy(rec[76:332], host)
	binary.NativeEndian.PutUint32(rec[340:], 1700000000)
	return rec
}

func TestWtmp(t *testing.T) {
	f := filepath.Join(t.TempDir(), "wtmp")
	os.WriteFile(f, utmpRecord(2, 0, "~", "reboot", ""), 0o600)
	b := &utmpBeacon{name: "wtmp", file: f, wtmp: true, ttys: map[string]string{}}
	if evs, _ := b.Beacon(t.Context(), &Env{}, nil); len(evs) != 0 {
		t.Fatal("first pass reported old records")
	}
	fh, _ := os.OpenFile(f, os.O_APPEND|os.O_WRONLY, 0)
	fh.Write(utmpRecord(7, 42, "pts/1", "alice", "10.0.0.1"))
	fh.Write(utmpRecord(8, 42, "pts/1", "", ""))
	fh.Close()
	evs, _ := b.Beacon(t.Context(), &Env{}, []any{ordered.FromPairs("users", ordered.FromPairs("alice", ordered.New()))})
	if len(evs) != 2 || evs[0].Value("action") != "login" || evs[1].Value("action") != "logout" || evs[1].Value("user") != "alice" {
		t.Fatalf("%v", evs)
	}
	keys := strings.Join(evs[0].StringKeys(), ",")
	if keys != "type,PID,line,inittab,user,hostname,exit_status,session,time,addr,action" || evs[0].Value("hostname") != "10.0.0.1" || evs[0].Value("addr") != 1700000000 {
		t.Fatalf("record %v", evs[0])
	}
}

func FuzzParseUtmp(f *testing.F) {
	f.Add(utmpRecord(7, 1, "pts/0", "root", "host"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec := make([]byte, utmpSize)
		copy(rec, b)
		if _, err := parseUtmp(rec); err != nil {
			t.Fatal(err)
		}
	})
}

func TestLogBeacon(t *testing.T) {
	f := filepath.Join(t.TempDir(), "log")
	os.WriteFile(f, []byte("old good-bye\n"), 0o600)
	b := &logBeacon{}
	cfg := []any{ordered.FromPairs("file", f), ordered.FromPairs("tags", ordered.FromPairs("goodbye/world", ordered.FromPairs("regex", ".*good-bye.*"), "bad", ordered.FromPairs("regex", "(")))}
	if evs, _ := b.Beacon(t.Context(), &Env{}, cfg); len(evs) != 0 {
		t.Fatal("first pass read old lines")
	}
	fh, _ := os.OpenFile(f, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString("hello\nsay good-bye now\n")
	fh.Close()
	evs, _ := b.Beacon(t.Context(), &Env{}, cfg)
	if len(evs) != 2 || evs[0].Value("error") != "bad regex" || evs[1].Value("raw") != "say good-bye now" || evs[1].Value("match") != "yes" || evs[1].Value("tag") != "goodbye/world" {
		t.Fatalf("%v", evs)
	}
}
