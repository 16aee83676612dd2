package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	_ "github.com/brinesalt/brine/state/modules/grains" // grains.setval, copied into the fixture's registry
	"github.com/brinesalt/brine/state/modules/saltutil"
	"github.com/brinesalt/brine/state/states/filestate"
)

// step is one call in a sequence: the JSON return must contain every
// string of contains and none of lacks, and the retcode must be rc.
type step struct {
	fun      string
	args     []string
	contains []string
	lacks    []string
	rc       int
}

func runSteps(t *testing.T, f *fixture, steps []step) {
	t.Helper()
	for i, s := range steps {
		got, rc, err := f.call(t, s.fun, s.args...)
		if err != nil {
			t.Fatalf("step %d %s %v: %v", i, s.fun, s.args, err)
		}
		for _, c := range s.contains {
			if !strings.Contains(got, c) {
				t.Errorf("step %d %s %v: return %s\nlacks %s", i, s.fun, s.args, got, c)
			}
		}
		for _, c := range s.lacks {
			if strings.Contains(got, c) {
				t.Errorf("step %d %s %v: return %s\nhas %s", i, s.fun, s.args, got, c)
			}
		}
		if rc != s.rc {
			t.Errorf("step %d %s %v: retcode = %d, want %d", i, s.fun, s.args, rc, s.rc)
		}
	}
}

var moreSalt = map[string]string{
	"top.sls":     "base:\n  '*':\n    - a\n    - b\n",
	"alt_top.sls": "base:\n  '*':\n    - c\n",
	"a.sls":       "a1:\n  test.succeed_without_changes: []\na2:\n  test.nop: []\n",
	"b.sls":       "include:\n  - a\nb1:\n  test.succeed_with_changes:\n    - require:\n      - test: a1\n",
	"c.sls":       "c1:\n  test.fail_without_changes: []\n",
	"unused.sls":  "u1:\n  test.nop: []\n",
}

func TestShowAndLookupFunctions(t *testing.T) {
	f := newFixture(t, moreSalt, nil)
	local := filepath.Join(t.TempDir(), "local")
	if err := os.WriteFile(local+".sls", []byte("l1:\n  test.succeed_with_changes: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runSteps(t, f, []step{
		{fun: "state.show_states", contains: []string{`{"r":["a","b"]}`}},
		{fun: "state.show_state_usage", contains: []string{
			`{"r":{"base":{"used":["a","b"],"unused":["alt_top","c","top","unused"],"count_all":6,"count_used":2,"count_unused":4}}}`}},
		{fun: "state.id_exists", args: []string{"a1,b1", "b"}, contains: []string{`{"r":true}`}},
		{fun: "state.id_exists", args: []string{"a1,zz", "b"}, contains: []string{`{"r":false}`}},
		{fun: "state.top", args: []string{"alt_top.sls"}, contains: []string{"test_|-c1_|-c1_|-fail_without_changes"}, lacks: []string{"a1"}, rc: 2},
		{fun: "state.top", args: []string{"salt://alt_top.sls", "test=True"}, contains: []string{`"result":false`, "If we weren't testing"}, rc: 2},
		{fun: "state.template", args: []string{local}, contains: []string{`"__sls__":"` + local + `.sls"`, `"result":true`}},
		{fun: "state.template", args: []string{local + "-missing.sls"},
			contains: []string{"Specified SLS " + local + "-missing.sls on local filesystem cannot be found."}, rc: 1},
		{fun: "state.low", args: []string{`{"state": "test", "fun": "succeed_with_changes", "name": "x", "__id__": "x"}`},
			contains: []string{`{"r":{"name":"x","changes":{"testing"`, `"__id__":"x"`}},
		{fun: "state.low", args: []string{`{"state": "test", "fun": "nope", "name": "x"}`},
			contains: []string{`["Specified state 'test.nope' was not found"]`}, rc: 1},
	})
}

func TestDisableEnable(t *testing.T) {
	f := newFixture(t, moreSalt, nil)
	conf := t.TempDir()
	f.env.Opts.Set("conf_file", filepath.Join(conf, "minion"))
	setval, err := modules.Default.Lookup(f.env, "grains.setval")
	if err != nil {
		t.Fatal(err)
	}
	f.reg.Register(*setval)
	runSteps(t, f, []step{
		{fun: "state.list_disabled", contains: []string{`{"r":""}`}},
		{fun: "state.disable", args: []string{"a,test.succeed_with_changes"},
			contains: []string{`"res":true,"msg":"Info: a state disabled.\nInfo: test.succeed_with_changes state disabled."`}},
		{fun: "state.disable", args: []string{"a"}, contains: []string{`"msg":"Info: a state already disabled."`}},
		{fun: "state.list_disabled", contains: []string{`{"r":["a","test.succeed_with_changes"]}`}},
		{fun: "state.sls", args: []string{"a"}, contains: []string{`The state file \"a\" is currently disabled, to re-enable, run state.enable a.`}, rc: 1},
		// A disabled state function fails where it would have run and is
		// not there for requisites; the rest of the run goes on.
		{fun: "state.sls", args: []string{"b"}, contains: []string{
			`"test_|-b1_|-b1_|-succeed_with_changes":{"changes":{},"result":false,"comment":"The state function \"test.succeed_with_changes\" is currently disabled by \"test.succeed_with_changes\", to re-enable, run state.enable test.succeed_with_changes.","__run_num__":0,"__sls__":"b"}`,
			`"test_|-a1_|-a1_|-succeed_without_changes":{"name":"a1"`}, rc: 2},
		{fun: "state.disable", args: []string{"highstate"}},
		{fun: "state.highstate", contains: []string{`{"r":{"name":"Salt highstate run is disabled. To re-enable, run state.enable highstate","result":"False","comment":"Disabled"}}`}},
		{fun: "state.enable", args: []string{"a,highstate,test.succeed_with_changes,zz"},
			contains: []string{`Info: a state enabled.\nInfo: highstate state enabled.\nInfo: test.succeed_with_changes state enabled.\nInfo: zz state already enabled.`}},
		{fun: "state.list_disabled", contains: []string{`{"r":[]}`}},
		{fun: "state.apply", contains: []string{`"result":true`}, lacks: []string{`"result":false`}},
	})
	b, err := os.ReadFile(filepath.Join(conf, "grains"))
	if err != nil || !strings.Contains(string(b), "state_runs_disabled") {
		t.Errorf("grains file: %q, %v", b, err)
	}
}

func TestDisabledWildcard(t *testing.T) {
	f := newFixture(t, moreSalt, nil)
	f.env.Grains().Set("state_runs_disabled", []any{"web.*"})
	runSteps(t, f, []step{
		{fun: "state.sls", args: []string{"web.conf"}, contains: []string{`The state file \"web.conf\" is currently disabled by \"web.*\", to re-enable, run state.enable web.*.`}, rc: 1},
		{fun: "state.sls", args: []string{"a"}, contains: []string{`"result":true`}},
	})
}

func TestRequests(t *testing.T) {
	f := newFixture(t, moreSalt, nil)
	f.env.Opts.Set("cachedir", t.TempDir())
	runSteps(t, f, []step{
		{fun: "state.check_request", contains: []string{`{"r":{}}`}},
		{fun: "state.request", args: []string{"a"}, contains: []string{`"result":true`}},
		{fun: "state.request", args: []string{"c", "name=other"}, contains: []string{"If we weren't testing"}, rc: 2},
		{fun: "state.check_request", args: []string{"other"}, contains: []string{`"mods":"c","kwargs":{"name":"other","test":true}`}},
		{fun: "state.clear_request", args: []string{"nosuch"}, contains: []string{`{"r":false}`}},
		{fun: "state.clear_request", args: []string{"other"}, contains: []string{`{"r":true}`}},
		{fun: "state.check_request", contains: []string{`{"r":{"default":{"test_run":`}, lacks: []string{"other"}},
		{fun: "state.run_request", args: []string{"nosuch"}, contains: []string{`{"r":{}}`}},
		// The request runs for real: test.succeed_without_changes
		// reports True, not None, and the request is gone afterwards.
		{fun: "state.run_request", contains: []string{`"test_|-a1_|-a1_|-succeed_without_changes":{"name":"a1","changes":{},"result":true`}},
		{fun: "state.check_request", contains: []string{`{"r":{}}`}},
		{fun: "state.clear_request", contains: []string{`{"r":true}`}},
	})
	st, err := os.Stat(requestPath(f.env))
	if err == nil {
		t.Errorf("request file left after run_request: %v", st.Mode())
	}
}

func TestRequestFileIsPrivate(t *testing.T) {
	f := newFixture(t, moreSalt, nil)
	f.env.Opts.Set("cachedir", t.TempDir())
	runSteps(t, f, []step{{fun: "state.request", args: []string{"a"}, contains: []string{"a1"}}})
	st, err := os.Stat(requestPath(f.env))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("req_state.p mode %o, want 600", st.Mode().Perm())
	}
}

func TestClearCacheAndRunning(t *testing.T) {
	f := newFixture(t, moreSalt, nil)
	dir := t.TempDir()
	f.env.Opts.Set("cachedir", dir)
	for _, n := range []string{"highstate.cache.p", "keep.p"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	runSteps(t, f, []step{
		{fun: "state.clear_cache", contains: []string{`{"r":["highstate.cache.p"]}`}},
		{fun: "state.clear_cache", contains: []string{`{"r":[]}`}},
		{fun: "state.running", args: []string{"concurrent=True"}, contains: []string{`{"r":[]}`}},
	})
	if _, err := os.Stat(filepath.Join(dir, "keep.p")); err != nil {
		t.Errorf("clear_cache removed another file: %v", err)
	}
}

func TestJidToTime(t *testing.T) {
	for jid, want := range map[string]string{
		"20261201032210123456": "2026, Dec 01 03:22:10.123456",
		"2026120103221012345":  "",
		"20261301032210123456": "",
		"2026120103221012345x": "",
	} {
		if got := jidToTime(jid); got != want {
			t.Errorf("jidToTime(%s) = %q, want %q", jid, got, want)
		}
	}
}

func TestRunningListsStateJobs(t *testing.T) {
	f := newFixture(t, moreSalt, nil)
	isRunning, err := modules.Default.Lookup(f.env, "saltutil.is_running")
	if err != nil {
		t.Fatal(err)
	}
	f.reg.Register(*isRunning)
	jobs := saltutil.NewJobRegistry()
	jobs.Add(saltutil.Job{JID: "20261201032210123456", Fun: "state.apply", Pid: 4242})
	jobs.Add(saltutil.Job{JID: "20261201032211000000", Fun: "test.ping", Pid: 4243})
	jobs.Add(saltutil.Job{JID: "20261201032212000000", Fun: "state.running", Pid: 4244})
	f.env.Context = map[string]any{saltutil.ContextKey: jobs}
	got, err := f.env.Run(context.Background(), "state.running", nil, ordered.FromPairs("__pub_jid", "20261201032212000000"))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{`The function "state.apply" is running as PID 4242 and was started at 2026, Dec 01 03:22:10.123456 with jid 20261201032210123456`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("state.running (-want +got):\n%s", d)
	}
}

// TestReloadPillarAndGrains writes the pillar file and the grains file
// from states with reload_pillar and reload_grains, and reads them back
// at run time (contents_pillar, contents_grains) in later states: they
// see the new values, and without the keywords they would not.
func TestReloadPillarAndGrains(t *testing.T) {
	out := t.TempDir()
	conf := t.TempDir()
	sls := func(reload bool) string {
		kw := ""
		if reload {
			kw = "    - reload_pillar: True\n    - reload_grains: True\n"
		}
		return "write_pillar:\n  file.managed:\n    - name: {{ opts['pillar_roots']['base'][0] }}/data.sls\n    - contents: 'k: new'\n" +
			strings.Replace(kw, "    - reload_grains: True\n", "", 1) +
			"write_grains:\n  file.managed:\n    - name: " + conf + "/grains\n    - contents: 'g: new'\n" +
			strings.Replace(kw, "    - reload_pillar: True\n", "", 1) +
			"read_pillar:\n  file.managed:\n    - name: " + out + "/p\n    - contents_pillar: k\n    - require:\n      - file: write_pillar\n" +
			"read_grains:\n  file.managed:\n    - name: " + out + "/g\n    - contents_grains: g\n    - require:\n      - file: write_grains\n"
	}
	for _, reload := range []bool{false, true} {
		f := newFixture(t, map[string]string{"r.sls": sls(reload)},
			map[string]string{"top.sls": "base:\n  '*':\n    - data\n", "data.sls": "k: old\n"})
		filestate.Register(f.states)
		f.env.Opts.Set("conf_file", filepath.Join(conf, "minion"))
		f.env.Opts.Set("enable_fqdns_grains", false)
		f.env.Grains().Set("g", "old")
		if err := os.WriteFile(filepath.Join(conf, "grains"), []byte("g: old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, rc, err := f.call(t, "state.sls", "r"); err != nil || rc != 0 {
			t.Fatalf("reload=%v: state.sls r: rc %d, %v", reload, rc, err)
		}
		want := "old\n"
		if reload {
			want = "new\n"
		}
		for _, name := range []string{"p", "g"} {
			b, err := os.ReadFile(filepath.Join(out, name))
			if err != nil || string(b) != want {
				t.Errorf("reload=%v: %s = %q, %v; want %q", reload, name, b, err, want)
			}
		}
	}
}
