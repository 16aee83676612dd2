package thin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules/saltutil/proc"
	"github.com/brinesalt/brine/thin"
	"github.com/brinesalt/brine/thin/frame"
)

func fixedGrains(context.Context, coregrains.GatherOptions) (*ordered.Map, error) {
	return ordered.FromPairs("id", "web1"), nil
}

// TestExecuteRegistersJob runs a long job and, while it runs, sees it
// through saltutil.running and find_job in other jobs, then stops it
// with kill_job.
func TestExecuteRegistersJob(t *testing.T) {
	jobs := proc.NewJobRegistry()
	o := thin.Options{Gather: fixedGrains, Jobs: jobs}
	ctx := context.Background()
	done := make(chan *frame.Result)
	go func() {
		done <- thin.Execute(ctx, &frame.Job{JID: "20260101000000000001", ID: "web1", Fun: "test.sleep", Arg: []any{"60"}}, o)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := jobs.Find("20260101000000000001"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job never appeared in the registry")
		}
		time.Sleep(5 * time.Millisecond)
	}
	running := thin.Execute(ctx, &frame.Job{JID: "2", Fun: "saltutil.running"}, o)
	l, _ := running.Return.([]any)
	var funs []string
	for _, j := range l {
		funs = append(funs, j.(*ordered.Map).Value("fun").(string))
	}
	if len(funs) != 2 || funs[0] != "test.sleep" || funs[1] != "saltutil.running" {
		t.Errorf("saltutil.running funs = %v, want the sleeping job and itself", funs)
	}
	found := thin.Execute(ctx, &frame.Job{JID: "3", Fun: "saltutil.find_job", Arg: []any{"20260101000000000001"}}, o)
	if m, ok := found.Return.(*ordered.Map); !ok || m.Value("fun") != "test.sleep" || m.Value("tgt") != "salt-call" {
		t.Errorf("find_job = %v", found.Return)
	}
	thin.Execute(ctx, &frame.Job{JID: "4", Fun: "saltutil.kill_job", Arg: []any{"20260101000000000001"}}, o)
	select {
	case res := <-done:
		if res.Retcode == 0 {
			t.Errorf("killed job returned %v with retcode 0", res.Return)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("kill_job did not stop the job")
	}
	if l := jobs.List(); len(l) != 0 {
		t.Errorf("registry after the jobs = %v, want empty", l)
	}
}

// TestExecuteLeavesOwnedJob keeps a job registered by its owner (the
// minion) in place.
func TestExecuteLeavesOwnedJob(t *testing.T) {
	jobs := proc.NewJobRegistry()
	remove := jobs.Add(proc.Job{JID: "5", Fun: "test.ping", Tgt: "web*"})
	defer remove()
	thin.Execute(context.Background(), &frame.Job{JID: "5", Fun: "test.ping"}, thin.Options{Gather: fixedGrains, Jobs: jobs})
	j, ok := jobs.Find("5")
	if !ok || j.Tgt != "web*" {
		t.Errorf("owner's job = %+v, %v; want it untouched", j, ok)
	}
}

// TestExecuteCustomGrains runs a job with Salt's grains sequence: a
// custom grain executable in <cachedir>/extmods/grains overrides core
// grains, the grains file overrides it, the grains option overrides
// both, and roster grains come last.
func TestExecuteCustomGrains(t *testing.T) {
	cache, conf := t.TempDir(), t.TempDir()
	dir := filepath.Join(cache, "extmods", "grains")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho '{\"rack\": \"custom\", \"file_wins\": \"custom\", \"opt_wins\": \"custom\", \"kernel\": \"custom\"}'\n"
	if err := os.WriteFile(filepath.Join(dir, "rack"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "grains"), []byte("file_wins: file\nopt_wins: file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := ordered.FromPairs("cachedir", cache, "config_dir", conf, "grains", ordered.FromPairs("opt_wins", "opt"))
	res := thin.Execute(context.Background(), &frame.Job{JID: "6", ID: "web1", Fun: "grains.item",
		Arg: []any{"rack", "file_wins", "opt_wins", "kernel", "roster"}, Opts: opts,
		Grains: ordered.FromPairs("roster", "r")}, thin.Options{Jobs: proc.NewJobRegistry()})
	got, err := res.Return.(*ordered.Map).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"rack":"custom","file_wins":"file","opt_wins":"opt","kernel":"custom","roster":"r"}`
	if string(got) != want {
		t.Errorf("grains.item = %s, want %s", got, want)
	}
}

// TestExecuteGathersGrainsOnFirstUse: a job whose function never reads
// grains does not gather them (on a cold host that is a systemctl run and
// a cache write), even when the controller offers to take them; one that
// reads them, or that the controller asks to return them, gathers them
// once, and sends them back when asked or offered.
func TestExecuteGathersGrainsOnFirstUse(t *testing.T) {
	for _, tc := range []struct {
		fun     string
		arg     []any
		dataKey string // frame.ReturnGrains, frame.OfferGrains or none
		want    int
	}{
		{"test.ping", nil, "", 0},
		{"test.echo", []any{"hi"}, "", 0},
		{"cmd.run", []any{"true"}, "", 0},
		{"test.ping", nil, frame.OfferGrains, 0},
		{"test.ping", nil, frame.ReturnGrains, 1},
		{"grains.items", nil, "", 1},
		{"grains.get", []any{"id"}, frame.OfferGrains, 1},
	} {
		gathers := 0
		gather := func(ctx context.Context, o coregrains.GatherOptions) (*ordered.Map, error) {
			gathers++
			return fixedGrains(ctx, o)
		}
		job := &frame.Job{JID: "20260101000000000002", ID: "web1", Fun: tc.fun, Arg: tc.arg}
		if tc.dataKey != "" {
			job.Data = ordered.FromPairs(tc.dataKey, true)
		}
		res := thin.Execute(context.Background(), job, thin.Options{Gather: gather, Jobs: proc.NewJobRegistry()})
		if res.Retcode != 0 {
			t.Errorf("%s: %+v", tc.fun, res)
		}
		if gathers != tc.want {
			t.Errorf("%s (%q): gathered %d times, want %d", tc.fun, tc.dataKey, gathers, tc.want)
		}
		returned := tc.dataKey != "" && tc.want > 0
		if got := res.Grains != nil && res.Grains.Value("id") == "web1"; got != returned {
			t.Errorf("%s (%q): grains returned: %v, want %v", tc.fun, tc.dataKey, res.Grains, returned)
		}
	}
}
