package sshexec

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/sshtest"
	"github.com/brinesalt/brine/state/modules"
	_ "github.com/brinesalt/brine/state/modules/allmodules" // salt-ssh's registry
	"github.com/brinesalt/brine/thin/core"
)

func newFlavorFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, sshtest.Options{})
	var err error
	if f.bundle, err = OpenBundle(buildFlavors(t), filepath.Join(t.TempDir(), "cache")); err != nil {
		t.Fatal(err)
	}
	if f.bundle.Core == nil || f.bundle.Core.ID == f.bundle.ID {
		t.Fatalf("bundle core flavor = %+v, want its own build id", f.bundle.Core)
	}
	return f
}

// TestCoreFunctionsAreWhatTheCoreBinaryLinks: the controller's list of
// core functions comes from the registrations the core binary makes, so
// the binary runs every function salt-ssh sends it to.
func TestCoreFunctionsAreWhatTheCoreBinaryLinks(t *testing.T) {
	bin := filepath.Join(buildFlavors(t), "salt-thin-core-linux-"+runtime.GOARCH)
	out, err := exec.Command(bin, "functions").Output()
	if err != nil {
		t.Fatalf("%s functions: %v", bin, err)
	}
	linked := strings.Fields(string(out))
	inBinary := modules.NewRegistry()
	for _, n := range linked {
		inBinary.Register(modules.Function{Name: n, Fn: func(context.Context, *modules.Call) (any, error) { return nil, nil }})
	}
	if diff := cmp.Diff(core.Modules, inBinary.Modules()); diff != "" {
		t.Errorf("modules the core binary links (-controller +binary):\n%s", diff)
	}
	want := core.Functions(modules.Default)
	if diff := cmp.Diff(want, core.Functions(inBinary)); diff != "" {
		t.Errorf("core functions (-controller +binary):\n%s", diff)
	}
	for _, fun := range []string{"test.ping", "test.echo", "test.version", "test.arg", "cmd.run", "cmd.run_all",
		"cmd.retcode", "cmd.shell", "grains.items", "grains.get", "grains.item", "grains.ls"} {
		if !slices.Contains(want, fun) {
			t.Errorf("%s is not a core function", fun)
		}
	}
}

// TestFlavorChoice: which binary a job may run on.
func TestFlavorChoice(t *testing.T) {
	f := newFlavorFixture(t)
	e := New(Options{Bundle: f.bundle})
	coreName := f.bundle.Core.BinName()
	for _, tc := range []struct {
		job  Job
		want string
	}{
		{Job{Fun: "test.ping"}, coreName},
		{Job{Fun: "cmd.run"}, coreName},
		{Job{Fun: "grains.items"}, coreName},
		{Job{Fun: "grains.items", full: true}, ""}, // inside a planned job
		{Job{Fun: "sys.list_functions"}, ""},
		{Job{Fun: "state.apply"}, ""},
		{Job{Fun: "file.touch"}, ""},
		{Job{Fun: "test.providers"}, ""}, // lists every module
		{Job{Fun: "test.cross_test"}, ""},
		{Job{Fun: "nosuch.fun"}, ""},
	} {
		if got := e.coreBin(tc.job); got != tc.want {
			t.Errorf("coreBin(%s, full=%v) = %q, want %q", tc.job.Fun, tc.job.full, got, tc.want)
		}
	}
	if got := New(Options{Bundle: &Bundle{}}).coreBin(Job{Fun: "test.ping"}); got != "" {
		t.Errorf("without a core build coreBin = %q", got)
	}
}

func TestParseDeployLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want deployLine
		err  bool
	}{
		{"BRINE-DEPLOY Linux x86_64 zstd", deployLine{arch: "amd64", codec: CodecZstd}, false},
		{"noise\nBRINE-DEPLOY Linux aarch64 \n", deployLine{arch: "arm64", codec: CodecRaw}, false},
		{"BRINE-DEPLOY Linux x86_64 gzip full", deployLine{arch: "amd64", codec: CodecGzip, hasFull: true}, false},
		{"BRINE-DEPLOY Linux x86_64  full", deployLine{arch: "amd64", codec: CodecRaw, hasFull: true}, false},
		{"BRINE-DEPLOY Linux x86_64 zstd need-full", deployLine{arch: "amd64", codec: CodecZstd, needFull: true}, false},
		{"BRINE-DEPLOY Linux x86_64 lz4", deployLine{arch: "amd64", codec: CodecRaw}, false},
		{"BRINE-DEPLOY Linux x86_64 zstd free=4321", deployLine{arch: "amd64", codec: CodecZstd, freeKiB: 4321, hasFree: true}, false},
		{"BRINE-DEPLOY Linux x86_64  free=0 wait", deployLine{arch: "amd64", codec: CodecRaw, hasFree: true}, false},
		{"BRINE-DEPLOY Linux x86_64 gzip free=-3 free=x", deployLine{arch: "amd64", codec: CodecGzip}, false},
		{"BRINE-DEPLOY Linux", deployLine{}, true},
		{"BRINE-DEPLOY Darwin arm64 zstd", deployLine{}, true},
	} {
		got, err := parseDeployLine(tc.line)
		if (err != nil) != tc.err || !tc.err && got != tc.want {
			t.Errorf("parseDeployLine(%q) = %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
}

// TestCoreOnFirstContactThenFull: a cold test.ping sends only the core;
// cmd.run runs on it; sys.list_functions needs the full thin, which then
// replaces the core and serves everything, core functions included.
func TestCoreOnFirstContactThenFull(t *testing.T) {
	f := newFlavorFixture(t)
	tg := f.target(t, "web1")
	coreName, fullName := f.bundle.Core.BinName(), f.bundle.BinName()

	r := f.run(t, Options{}, Job{Fun: "test.ping"}, tg)["web1"]
	if r.Return != true || !slices.Equal(r.Timings.Sent, []string{coreName}) {
		t.Fatalf("cold test.ping = %+v, want the core sent", r)
	}
	codec := CodecRaw
	for _, c := range []Codec{CodecGzip, CodecZstd} {
		if _, err := exec.LookPath(string(c)); err == nil {
			codec = c
		}
	}
	if payload, _, err := f.bundle.Core.Payload(runtime.GOARCH, codec); err != nil {
		t.Fatal(err)
	} else if st, err := os.Stat(payload); err != nil || st.Size() != r.Timings.SentBytes {
		t.Errorf("sent %d bytes, want the core's %s payload (%v, %v)", r.Timings.SentBytes, codec, st, err)
	}
	if bins := thinBinaries(t, tg.ThinDir); !slices.Equal(bins, []string{coreName}) {
		t.Errorf("thin_dir holds %v, want only %s", bins, coreName)
	}

	onCore := f.run(t, Options{}, Job{Fun: "cmd.run_all", Arg: []any{"echo hi; exit 3"}}, tg)["web1"]
	if onCore.Timings.Deployed || onCore.Retcode != 3 {
		t.Fatalf("cmd.run_all on the core = %+v", onCore)
	}

	r = f.run(t, Options{}, Job{Fun: "sys.list_functions"}, tg)["web1"]
	funcs, _ := r.Return.([]any)
	if !slices.Equal(r.Timings.Sent, []string{fullName}) || !slices.Contains(funcs, any("state.apply")) {
		t.Fatalf("sys.list_functions = sent %v, %d functions; want the full thin listing state.apply", r.Timings.Sent, len(funcs))
	}
	if bins := thinBinaries(t, tg.ThinDir); !slices.Equal(bins, []string{fullName}) {
		t.Errorf("thin_dir holds %v, want only %s (the core is dropped)", bins, fullName)
	}

	onFull := f.run(t, Options{}, Job{Fun: "cmd.run_all", Arg: []any{"echo hi; exit 3"}}, tg)["web1"]
	if onFull.Timings.Deployed {
		t.Fatalf("cmd.run_all after the full thin redeployed: %+v", onFull)
	}
	if !ordered.Equal(withoutPid(onCore.Return), withoutPid(onFull.Return)) || onFull.Out != onCore.Out || onFull.Retcode != onCore.Retcode {
		t.Errorf("cmd.run_all differs between flavors: core %#v (out %q), full %#v (out %q)", onCore.Return, onCore.Out, onFull.Return, onFull.Out)
	}
	m, _ := onFull.Return.(*ordered.Map)
	if m == nil || m.Value("stdout") != "hi" || m.Value("retcode") != 3 {
		t.Errorf("cmd.run_all = %#v", onFull.Return)
	}
}

// TestCoreAsksForFullWhereGrainsNeedYAML: the core flavor links no YAML
// codec, so on a host with a grains file (in thin_dir, where Salt's
// salt-ssh keeps it) it runs nothing and asks for the full thin, which
// then answers with the file's grains; a host that gets a grains file
// after the core was installed is moved to the full thin the same way.
func TestCoreAsksForFullWhereGrainsNeedYAML(t *testing.T) {
	f := newFlavorFixture(t)
	coreName, fullName := f.bundle.Core.BinName(), f.bundle.BinName()
	writeGrains := func(thinDir string) {
		t.Helper()
		if err := os.MkdirAll(thinDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(thinDir, "grains"), []byte("roles: [web]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	cold := f.target(t, "web1")
	writeGrains(cold.ThinDir)
	r := f.run(t, Options{}, Job{Fun: "grains.get", Arg: []any{"roles"}}, cold)["web1"]
	if !slices.Equal(r.Timings.Sent, []string{coreName, fullName}) || !reflect.DeepEqual(r.Return, []any{"web"}) {
		t.Fatalf("cold grains.get with a grains file = sent %v, %#v; want the core, then the full thin answering [web]", r.Timings.Sent, r.Return)
	}
	if r := f.run(t, Options{}, Job{Fun: "grains.get", Arg: []any{"roles"}}, cold)["web1"]; r.Timings.Deployed || !reflect.DeepEqual(r.Return, []any{"web"}) {
		t.Errorf("second grains.get = %+v, want the full thin's answer, nothing sent", r)
	}

	warmCore := f.target(t, "web2")
	if r := f.run(t, Options{}, Job{Fun: "test.ping"}, warmCore)["web2"]; !slices.Equal(r.Timings.Sent, []string{coreName}) {
		t.Fatalf("first test.ping sent %v, want the core", r.Timings.Sent)
	}
	writeGrains(warmCore.ThinDir)
	if r := f.run(t, Options{}, Job{Fun: "test.ping"}, warmCore)["web2"]; r.Return != true || !slices.Equal(r.Timings.Sent, []string{fullName}) {
		t.Errorf("test.ping on the core after a grains file appeared = %+v, want the full thin sent", r)
	}
}

// withoutPid drops the one key of a cmd.run_all return that differs
// from run to run.
func withoutPid(v any) any {
	m, ok := v.(*ordered.Map)
	if !ok {
		return v
	}
	m = m.Copy()
	m.Delete("pid")
	return m
}

// TestCoreNeverWhereFull: with the full thin present, core functions run
// on it and nothing is sent, even when redeploying (-t): the probe then
// reports the full thin and the full thin is sent again.
func TestCoreNeverWhereFull(t *testing.T) {
	f := newFlavorFixture(t)
	tg := f.target(t, "web1")
	fullName := f.bundle.BinName()
	if r := f.run(t, Options{}, Job{Fun: "sys.doc", Arg: []any{"test.ping"}}, tg)["web1"]; !slices.Equal(r.Timings.Sent, []string{fullName}) {
		t.Fatalf("sys.doc sent %v, want %s", r.Timings.Sent, fullName)
	}
	if r := f.run(t, Options{}, Job{Fun: "test.ping"}, tg)["web1"]; r.Return != true || r.Timings.Deployed {
		t.Errorf("test.ping with the full thin present = %+v", r)
	}
	r := f.run(t, Options{Redeploy: true}, Job{Fun: "test.ping"}, tg)["web1"]
	if r.Return != true || !slices.Equal(r.Timings.Sent, []string{fullName}) {
		t.Errorf("test.ping -t with the full thin present sent %v, want %s", r.Timings.Sent, fullName)
	}
	if bins := thinBinaries(t, tg.ThinDir); !slices.Equal(bins, []string{fullName}) {
		t.Errorf("thin_dir holds %v, want only %s", bins, fullName)
	}
}

// TestPlannedJobUsesFull: a planned job (state.* through the wrapper)
// asks for grains and runs a function, all on the full thin: one upload.
func TestPlannedJobUsesFull(t *testing.T) {
	f := newFlavorFixture(t)
	tg := f.target(t, "web1")
	job := Job{Fun: "state.test", Plan: func(ctx context.Context, h *Host) (*Plan, error) {
		if _, err := h.Grains(ctx); err != nil {
			return nil, err
		}
		return &Plan{Fun: "test.echo", Arg: []any{"planned"}}, nil
	}}
	r := f.run(t, Options{}, job, tg)["web1"]
	if r.Return != "planned" || !slices.Equal(r.Timings.Sent, []string{f.bundle.BinName()}) {
		t.Fatalf("planned job = %+v, want the full thin sent once", r)
	}
}

// TestWipeRemovesBothFlavors: --wipe removes thin_dir with whichever
// flavors it holds.
func TestWipeRemovesBothFlavors(t *testing.T) {
	f := newFlavorFixture(t)
	tg := f.target(t, "web1")
	if r := f.run(t, Options{}, Job{Fun: "test.ping"}, tg)["web1"]; r.Return != true {
		t.Fatalf("test.ping = %+v", r)
	}
	// A full thin beside the core, as a concurrent run may leave it.
	src := filepath.Join(buildFlavors(t), "salt-thin-linux-"+runtime.GOARCH)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tg.ThinDir, f.bundle.BinName()), data, 0o700); err != nil {
		t.Fatal(err)
	}
	r := f.run(t, Options{Wipe: true}, Job{Fun: "test.ping"}, tg)["web1"]
	if r.Return != true {
		t.Fatalf("test.ping --wipe = %+v", r)
	}
	if _, err := os.Stat(tg.ThinDir); !os.IsNotExist(err) {
		t.Errorf("thin_dir still there after --wipe: %v", err)
	}
}
