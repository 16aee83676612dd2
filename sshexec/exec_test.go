package sshexec

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/sshtest"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec/sshconn"
)

// thinDir holds the thin binaries built once for all tests in this
// package: the full thin in thinDir, both flavors in thinDir/flavors.
var (
	thinOnce, flavorsOnce sync.Once
	thinDir               string
	thinErr, flavorsErr   error
)

// buildThin returns a directory holding the full thin, as make thin
// builds it for this machine's architecture.
func buildThin(t *testing.T) string {
	t.Helper()
	thinOnce.Do(func() {
		if thinDir, thinErr = os.MkdirTemp("", "brine-thin-"); thinErr == nil {
			thinErr = goBuild(thinDir, "salt-thin")
		}
	})
	if thinErr != nil {
		t.Fatalf("build thin: %v", thinErr)
	}
	return thinDir
}

// buildFlavors returns a directory with the full thin and the core
// flavor beside it, as make thin lays them out.
func buildFlavors(t *testing.T) string {
	t.Helper()
	full := filepath.Join(buildThin(t), "salt-thin-linux-"+runtime.GOARCH)
	dir := filepath.Join(thinDir, "flavors")
	flavorsOnce.Do(func() {
		if flavorsErr = os.Mkdir(dir, 0o755); flavorsErr == nil {
			if flavorsErr = os.Link(full, filepath.Join(dir, filepath.Base(full))); flavorsErr == nil {
				flavorsErr = goBuild(dir, "salt-thin-core")
			}
		}
	})
	if flavorsErr != nil {
		t.Fatalf("build thin flavors: %v", flavorsErr)
	}
	return dir
}

// goBuild builds cmd/<name> statically into dir/<name>-linux-<goarch>.
func goBuild(dir, name string) error {
	out := filepath.Join(dir, name+"-linux-"+runtime.GOARCH)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "github.com/brinesalt/brine/cmd/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w: %s", name, err, b)
	}
	return nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if thinDir != "" {
		os.RemoveAll(thinDir)
	}
	os.Exit(code)
}

type fixture struct {
	srv    *sshtest.Server
	key    string
	known  string
	bundle *Bundle
	dials  atomic.Int64
}

func newFixture(t *testing.T, opts sshtest.Options) *fixture {
	t.Helper()
	dir := t.TempDir()
	key, err := sshconn.EnsureKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	signers, err := sshconn.LoadSigners([]string{key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.AuthorizedKeys = append(opts.AuthorizedKeys, signers[0].PublicKey())
	f := &fixture{srv: sshtest.New(t, opts), key: key, known: filepath.Join(dir, "known_hosts")}
	if err := os.WriteFile(f.known, []byte(f.srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if f.bundle, err = OpenBundle(buildThin(t), filepath.Join(dir, "cache")); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) target(t *testing.T, id string) roster.Target {
	return roster.Target{ID: id, Host: f.srv.Host(), Port: f.srv.Port(), User: "root",
		Priv: f.key, ThinDir: filepath.Join(t.TempDir(), "thin"), Timeout: 5 * time.Second}
}

func (f *fixture) dial(ctx context.Context, t *roster.Target) (Conn, error) {
	f.dials.Add(1)
	return sshconn.Dial(ctx, sshconn.Config{Host: t.Host, Port: t.Port, User: t.User,
		Priv: []string{t.Priv}, KnownHostsFile: f.known, Timeout: t.Timeout})
}

func (f *fixture) run(t *testing.T, opts Options, job Job, targets ...roster.Target) map[string]Result {
	t.Helper()
	opts.Dial, opts.Bundle = f.dial, f.bundle
	got := map[string]Result{}
	for r := range New(opts).Run(context.Background(), targets, job) {
		got[r.ID] = r
	}
	return got
}

func TestColdThenWarm(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	tg := f.target(t, "web1")
	ping := Job{Fun: "test.ping"}

	r := f.run(t, Options{}, ping, tg)["web1"]
	if r.Return != true || r.Retcode != 0 || !r.Timings.Deployed {
		t.Fatalf("cold run = %+v", r)
	}
	// The probe waits for the upload and runs the job in its own session.
	st := f.srv.Stats()
	if st.Conns != 1 || st.SFTPOpens != 1 || st.Execs != 1 {
		t.Errorf("cold run stats = %+v, want 1 connection, 1 sftp, 1 exec", st)
	}

	r = f.run(t, Options{}, ping, tg)["web1"]
	if r.Return != true || r.Timings.Deployed {
		t.Fatalf("warm run = %+v", r)
	}
	st2 := f.srv.Stats()
	if st2.Conns-st.Conns != 1 || st2.SFTPOpens != st.SFTPOpens || st2.Execs-st.Execs != 1 {
		t.Errorf("warm run added %+v, want 1 connection, no sftp, 1 exec", st2)
	}
	if bins := thinBinaries(t, tg.ThinDir); !slices.Equal(bins, []string{f.bundle.BinName()}) {
		t.Errorf("thin_dir holds binaries %v, want only %s", bins, f.bundle.BinName())
	}
}

// TestColdBigJobInstallsInASecondSession: a job too long for a waiting
// probe to drop from stdin (canWait) takes the classic path: the probe
// exits and a second session installs and runs it, with the same answer.
func TestColdBigJobInstallsInASecondSession(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	big := strings.Repeat("x", maxWaitLine)
	r := f.run(t, Options{}, Job{Fun: "test.echo", Arg: []any{big}}, f.target(t, "web1"))["web1"]
	if r.Return != big || !r.Timings.Deployed {
		t.Fatalf("cold run of a long job = %.80v", r)
	}
	if st := f.srv.Stats(); st.SFTPOpens != 1 || st.Execs != 2 {
		t.Errorf("cold run of a long job: %+v, want 1 sftp, 2 execs", st)
	}
}

func TestWipeRemovesThinDir(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	tg := f.target(t, "web1")
	r := f.run(t, Options{Wipe: true}, Job{Fun: "test.echo", Arg: []any{"hi"}}, tg)["web1"]
	if r.Return != "hi" {
		t.Fatalf("result = %+v", r)
	}
	if _, err := os.Stat(tg.ThinDir); !os.IsNotExist(err) {
		t.Errorf("thin_dir still there after --wipe: %v", err)
	}
}

func TestDroppedUploadNeverLeavesBinary(t *testing.T) {
	f := newFixture(t, sshtest.Options{DropAfterSFTPBytes: 64 << 10})
	tg := f.target(t, "web1")
	r := f.run(t, Options{}, Job{Fun: "test.ping"}, tg)["web1"]
	if r.Err == nil || r.Retcode == 0 {
		t.Fatalf("dropped upload reported success: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(tg.ThinDir, f.bundle.BinName())); !os.IsNotExist(err) {
		t.Errorf("binary exists after a dropped upload: %v", err)
	}
}

func TestRawNeedsNoThin(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	r := f.run(t, Options{}, Job{Raw: "echo out; echo err >&2; exit 3"}, f.target(t, "web1"))["web1"]
	m, ok := r.Return.(*ordered.Map)
	if !ok || m.Value("stdout") != "out\n" || m.Value("stderr") != "err\n" || m.Value("retcode") != 3 || r.Retcode != 3 {
		t.Fatalf("raw result = %#v", r)
	}
	if f.srv.Stats().SFTPOpens != 0 {
		t.Errorf("raw mode opened sftp")
	}
}

func TestHostDownAmongHealthy(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	down := f.target(t, "down")
	down.Port = closedPort(t)
	got := f.run(t, Options{}, Job{Fun: "test.ping"}, f.target(t, "a"), down, f.target(t, "b"))
	if got["a"].Return != true || got["b"].Return != true {
		t.Errorf("healthy hosts failed: %+v", got)
	}
	if msg, _ := got["down"].Return.(string); got["down"].Retcode != 255 || len(msg) < 4 || msg[:4] != "ssh:" {
		t.Errorf("down host = %+v, want an ssh: message with retcode 255", got["down"])
	}
}

func TestSlidingWindow(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	var cur, peak atomic.Int64
	opts := Options{MaxProcs: 3, Bundle: f.bundle, Dial: func(ctx context.Context, tg *roster.Target) (Conn, error) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		c, err := f.dial(ctx, tg)
		if err != nil {
			cur.Add(-1)
			return nil, err
		}
		return closeHook{c, func() { cur.Add(-1) }}, nil
	}}
	var targets []roster.Target
	for i := range 10 {
		targets = append(targets, f.target(t, string(rune('a'+i))))
	}
	n := 0
	for r := range New(opts).Run(context.Background(), targets, Job{Fun: "test.ping"}) {
		if r.Return != true {
			t.Errorf("%s: %+v", r.ID, r)
		}
		n++
	}
	if n != 10 || peak.Load() > 3 {
		t.Errorf("results %d, peak concurrency %d; want 10 and at most 3", n, peak.Load())
	}
}

type closeHook struct {
	Conn
	fn func()
}

func (c closeHook) Close() error { c.fn(); return c.Conn.Close() }

func closedPort(t *testing.T) int {
	t.Helper()
	srv := sshtest.New(t, sshtest.Options{})
	p := srv.Port()
	srv.Close()
	return p
}

func TestNewBuildReplacesOld(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	tg := f.target(t, "web1")
	if r := f.run(t, Options{}, Job{Fun: "test.ping"}, tg)["web1"]; r.Return != true {
		t.Fatalf("first run = %+v", r)
	}
	old := f.bundle.BinName()
	// A second build: same binaries under another directory with one byte
	// appended, so its id differs.
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(buildThin(t), "salt-thin-linux-"+runtime.GOARCH))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "salt-thin-linux-"+runtime.GOARCH), append(src, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	if f.bundle, err = OpenBundle(dir, filepath.Join(dir, "cache")); err != nil {
		t.Fatal(err)
	}
	r := f.run(t, Options{}, Job{Fun: "test.ping"}, tg)["web1"]
	if r.Return != true || !r.Timings.Deployed {
		t.Fatalf("run with the new build = %+v", r)
	}
	if bins := thinBinaries(t, tg.ThinDir); !slices.Equal(bins, []string{f.bundle.BinName()}) || old == f.bundle.BinName() {
		t.Errorf("thin_dir holds binaries %v; want only %s (not the old %s)", bins, f.bundle.BinName(), old)
	}
}

// thinBinaries lists the salt-thin-* files in dir: binaries and any
// temporaries an upload left.
func thinBinaries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, n := range dirNames(t, dir) {
		if strings.HasPrefix(n, "salt-thin-") {
			out = append(out, n)
		}
	}
	return out
}
