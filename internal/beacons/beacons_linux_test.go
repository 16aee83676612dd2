package beacons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestInotifyEvents(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "watched")
	os.WriteFile(file, []byte("a"), 0o600)
	m := New(Options{Env: &Env{ID: "m1"}, Beacons: yamlConfig(t, `
beacons:
  inotify:
    - files:
        `+file+`:
          mask: [modify]
        `+dir+`:
          mask: [create]
          exclude: [`+filepath.Join(dir, "skip")+`]
    - disable_during_state_run: True
`)})
	defer m.closeAll()
	if evs := m.Process(t.Context()); len(evs) != 0 {
		t.Fatalf("first pass (adds the watches) fired %v", evs)
	}
	os.WriteFile(file, []byte("b"), 0o600)
	os.WriteFile(filepath.Join(dir, "new"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "skipped"), nil, 0o600)
	evs := eventsOf(m.Process(t.Context()))
	var got []string
	for _, e := range evs {
		d := e.Value("data").(*ordered.Map)
		if e.Value("beacon_name") != "inotify" || d.Value("id") != "m1" {
			t.Fatalf("event %v", e)
		}
		got = append(got, e.Value("tag").(string)+" "+d.Value("path").(string)+" "+d.Value("change").(string))
	}
	want := []string{
		"salt/beacon/m1/inotify/" + file + " " + file + " IN_MODIFY",
		"salt/beacon/m1/inotify/" + dir + " " + filepath.Join(dir, "new") + " IN_CREATE",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The data keys in Salt's order: path, change (tag popped), id.
	if k := evs[0].Value("data").(*ordered.Map).StringKeys(); strings.Join(k, ",") != "path,change,id" {
		t.Fatalf("data keys %v", k)
	}
}

func TestReaders(t *testing.T) {
	if a, err := parseLoadAvg("0.52 0.58 0.59 1/467 12345\n"); err != nil || a[2] != 0.59 {
		t.Fatalf("%v %v", a, err)
	}
	p, err := parseMemPercent([]byte("MemTotal:       16000000 kB\nMemFree: 1000 kB\nMemAvailable:    4000000 kB\n"))
	if err != nil || p != 75.0 {
		t.Fatalf("%v %v", p, err)
	}
	if unescapeMount(`/mnt/a\040b`) != "/mnt/a b" {
		t.Fatal(unescapeMount(`/mnt/a\040b`))
	}
	if _, err := readDiskPercent(t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

func FuzzReaders(f *testing.F) {
	f.Add("0.52 0.58 0.59 1/467 12345\n")
	f.Add("MemTotal: 10 kB\nMemAvailable: 5 kB\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseLoadAvg(s)
		_, _ = parseMemPercent([]byte(s))
		_ = unescapeMount(s)
	})
}

func TestInotifyCoalesce(t *testing.T) {
	for _, coalesce := range []bool{false, true} {
		file := filepath.Join(t.TempDir(), "f")
		os.WriteFile(file, []byte("a"), 0o600)
		b := &inotifyBeacon{fd: -1}
		defer b.Close()
		cfg := []any{ordered.FromPairs("files", ordered.FromPairs(file, ordered.FromPairs("mask", []any{"modify", "attrib"}))), ordered.FromPairs("coalesce", coalesce)}
		if _, err := b.Beacon(t.Context(), &Env{}, cfg); err != nil {
			t.Fatal(err)
		}
		// The kernel merges only consecutive identical events; these
		// alternate.
		for i := range 3 {
			f, _ := os.OpenFile(file, os.O_WRONLY, 0)
			f.Write([]byte("b"))
			f.Close()
			os.Chmod(file, os.FileMode(0o600|i))
		}
		evs, _ := b.Beacon(t.Context(), &Env{}, cfg)
		if coalesce && len(evs) != 2 || !coalesce && len(evs) != 6 {
			t.Fatalf("coalesce %v: %d events", coalesce, len(evs))
		}
	}
}
