//go:build !windows

package winetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/internal/testsupport/winetest"
)

// buildExe cross-builds salt-minion.exe into dir.
func buildExe(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/brinesalt/brine/cmd/salt-minion")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build salt-minion.exe: %v\n%s", err, out)
	}
	return filepath.Join(dir, "salt-minion.exe")
}

// winCluster is a Brine master on loopback in the Wine prefix's network
// namespace, with a Windows minion's config written for it.
type winCluster struct {
	*clustertest.Cluster
	w       *winetest.Wine
	exe     string
	confDir string // Linux path of the minion's config directory
}

func newWinCluster(t *testing.T, opts ...winetest.Option) *winCluster {
	w := winetest.New(t, opts...)
	c := clustertest.NewSetup(t, clustertest.Setup{MasterCommand: func(name string, args ...string) *exec.Cmd {
		return w.Linux(context.Background(), name, args...)
	}})
	wc := &winCluster{Cluster: c, w: w, exe: buildExe(t, t.TempDir()), confDir: filepath.Join(c.Dir, "minion-win1")}
	os.MkdirAll(wc.confDir, 0o700)
	conf := fmt.Sprintf("master: 127.0.0.1\nmaster_port: %d\nid: win1\npki_dir: %s\ncachedir: %s\n"+
		"acceptance_wait_time: 1\nrandom_reauth_delay: 1\nrecon_default: 200\nrecon_max: 500\n",
		c.RetPort(), winetest.WinPath(filepath.Join(wc.confDir, "pki")), winetest.WinPath(filepath.Join(wc.confDir, "cache")))
	conf += "publish_port: " + strconv.Itoa(pubPort(t, c)) + "\n"
	os.WriteFile(filepath.Join(wc.confDir, "minion"), []byte(conf), 0o600)
	return wc
}

// pubPort reads publish_port back from the master's config.
func pubPort(t *testing.T, c *clustertest.Cluster) int {
	b, err := os.ReadFile(filepath.Join(c.Dir, "master/master"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "publish_port: "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatal("no publish_port in the master config")
	return 0
}

// startSession runs salt-minion.exe directly, as session mode does;
// env is added to its environment (DISPLAY for the GUI test).
func (wc *winCluster) startSession(t *testing.T, env ...string) *exec.Cmd {
	cmd := wc.w.Command(context.Background(), wc.exe, "-c", winetest.WinPath(wc.confDir), "-l", "info")
	cmd.Env = append(cmd.Env, env...)
	buf := &clustertest.SyncBuffer{}
	wc.Logs["win1"] = buf
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// accept waits for win1's key to be pending, accepts it with salt-key
// and waits until win1 answers test.ping.
func (wc *winCluster) accept(t *testing.T) {
	t.Helper()
	wc.WaitFor("win1 pending", func() bool {
		out, _ := wc.Run("salt-key", "-l", "pre")
		return strings.Contains(out, "win1")
	})
	if out, code := wc.Run("salt-key", "-y", "-a", "win1"); code != 0 {
		t.Fatalf("salt-key -a win1: exit %d\n%s", code, out)
	}
	wc.PingUntil("win1", "win1")
}

// json runs salt with --out json and returns win1's return.
func (wc *winCluster) json(t *testing.T, args ...string) any {
	t.Helper()
	out, code := wc.Run("salt", append([]string{"win1", "--out", "json", "-t", "30"}, args...)...)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("salt win1 %v (exit %d): %v\n%s", args, code, err, out)
	}
	return m["win1"]
}

func stop(cmd *exec.Cmd) {
	cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// TestWindowsMinion: salt-minion.exe under Wine signs in to a Brine
// master, is accepted with salt-key, and answers test.ping, grains,
// cmd.run through cmd.exe, file.managed and file.read on C:, and
// reg.present and reg.read_value.
func TestWindowsMinion(t *testing.T) {
	wc := newWinCluster(t)
	m := wc.startSession(t)
	defer stop(m)
	wc.accept(t)
	if g := wc.json(t, "grains.item", "os_family", "minion_mode"); fmt.Sprint(g) != "map[minion_mode:session os_family:Windows]" {
		t.Errorf("grains.item = %v", g)
	}
	host, _ := os.Hostname()
	if got := wc.json(t, "cmd.run", "echo %COMPUTERNAME%"); !strings.EqualFold(fmt.Sprint(got), host) {
		t.Errorf("cmd.run echo %%COMPUTERNAME%% = %v, want %s", got, host)
	}
	st := wc.json(t, "state.single", "file.managed", `name=C:\brine\x.txt`, "contents=hello from win1", "makedirs=True")
	if !strings.Contains(fmt.Sprint(st), "result:true") {
		t.Errorf("file.managed = %v", st)
	}
	if got := wc.json(t, "file.read", `C:\brine\x.txt`); strings.TrimRight(fmt.Sprint(got), "\r\n") != "hello from win1" {
		t.Errorf("file.read = %q", got)
	}
	if b, err := os.ReadFile(wc.w.C(`brine\x.txt`)); err != nil || strings.TrimRight(string(b), "\r\n") != "hello from win1" {
		t.Errorf("C:\\brine\\x.txt in the prefix: %q, %v", b, err)
	}
	st = wc.json(t, "state.single", "reg.present", `name=HKLM\SOFTWARE\Brine`, "vname=greeting", "vdata=hi")
	if !strings.Contains(fmt.Sprint(st), "result:true") || !strings.Contains(fmt.Sprint(st), "Added greeting") {
		t.Errorf("reg.present = %v", st)
	}
	got := wc.json(t, "reg.read_value", "HKLM", `SOFTWARE\Brine`, "greeting").(map[string]any)
	if got["vdata"] != "hi" || got["vtype"] != "REG_SZ" || got["success"] != true {
		t.Errorf("reg.read_value = %v", got)
	}
}

// TestWindowsSessionGUI: in session mode (salt-minion.exe run directly,
// in a prefix with an Xvfb display) cmd.run_bg notepad makes a Notepad
// window appear, found with xdotool.
func TestWindowsSessionGUI(t *testing.T) {
	for _, tool := range []string{"Xvfb", "xdotool"} {
		if _, err := exec.LookPath(tool); err != nil {
			testhosts.Skip(t, "no "+tool+" (Debian xvfb, xdotool) for the session mode GUI test")
		}
	}
	wc := newWinCluster(t, winetest.WithXvfb())
	display := wc.w.Display
	m := wc.startSession(t)
	wc.accept(t)
	bg := wc.json(t, "cmd.run_bg", "notepad.exe").(map[string]any)
	if _, ok := bg["pid"]; !ok || bg["warnings"] != nil {
		t.Errorf("session run_bg notepad = %v", bg)
	}
	wc.WaitFor("a Notepad window on "+display, func() bool {
		out, _ := wc.w.Linux(context.Background(), "xdotool", "search", "--name", "Notepad").Output()
		return len(bytes.TrimSpace(out)) > 0
	})
	stop(m)
}

// wine runs salt-minion.exe (or another Windows program) under Wine to
// its end and returns its combined output and exit code.
func (wc *winCluster) wine(t *testing.T, exe string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := wc.w.Command(ctx, exe, args...).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("wine %s %v: %v\n%s", exe, args, err, out)
	return "", 0
}

// TestWindowsService: service mode under Wine's service manager
// (services.exe). salt-minion.exe install registers the service, start
// has the SCM start it, the minion it hosts signs in and answers jobs
// (minion_mode is service; service.status of its own service through
// the SCM is True, service.disable and service.enable of it change its
// start type), cmd.run_bg of a GUI program gets the Session 0 warning
// naming session mode, stop ends it (STOPPED, exit code 0), session
// install disables it and remove deletes it.
func TestWindowsService(t *testing.T) {
	wc := newWinCluster(t)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(wc.w.BootLog)
			t.Logf("--- the prefix's boot log (services.exe and its services) ---\n%s", b)
		}
	})
	if out, code := wc.wine(t, wc.exe, "install", "-c", winetest.WinPath(wc.confDir), "-l", "info"); code != 0 {
		t.Fatalf("salt-minion.exe install: exit %d\n%s", code, out)
	}
	if out, code := wc.wine(t, "sc.exe", "query", "salt-minion"); code != 0 || !strings.Contains(out, "STOPPED") {
		t.Fatalf("sc query salt-minion after install: exit %d\n%s", code, out)
	}
	if out, code := wc.wine(t, wc.exe, "start"); code != 0 {
		t.Fatalf("salt-minion.exe start: exit %d\n%s", code, out)
	}
	if out, _ := wc.wine(t, "sc.exe", "query", "salt-minion"); !strings.Contains(out, "RUNNING") {
		t.Fatalf("sc query salt-minion after start:\n%s", out)
	}
	wc.accept(t)
	if g := wc.json(t, "grains.item", "minion_mode"); fmt.Sprint(g) != "map[minion_mode:service]" {
		t.Errorf("grains.item minion_mode = %v", g)
	}
	if st := wc.json(t, "service.status", "salt-minion"); st != true {
		t.Errorf("service.status salt-minion = %v", st)
	}
	for _, fun := range []string{"service.disable", "service.enable"} {
		if got := wc.json(t, fun, "salt-minion"); got != true {
			t.Errorf("%s salt-minion = %v", fun, got)
		}
	}
	bg, _ := wc.json(t, "cmd.run_bg", "notepad.exe").(map[string]any)
	warn := fmt.Sprint(bg["warnings"])
	if _, ok := bg["pid"]; !ok || !strings.Contains(warn, "Session 0") || !strings.Contains(warn, "session mode") {
		t.Errorf("service run_bg notepad = %v, want a pid and the Session 0 warning naming session mode", bg)
	}
	if out, code := wc.wine(t, wc.exe, "stop"); code != 0 {
		t.Fatalf("salt-minion.exe stop: exit %d\n%s", code, out)
	}
	if out, _ := wc.wine(t, "sc.exe", "query", "salt-minion"); !strings.Contains(out, "STOPPED") || !strings.Contains(out, "WIN32_EXIT_CODE    : 0 ") {
		t.Errorf("sc query salt-minion after stop:\n%s", out)
	}
	// session install disables the installed service (the services.msc
	// step) and writes the Run key; session remove deletes the key.
	if out, code := wc.wine(t, wc.exe, "session", "install", "-c", winetest.WinPath(wc.confDir)); code != 0 {
		t.Errorf("salt-minion.exe session install: exit %d\n%s", code, out)
	}
	if out, _ := wc.wine(t, "reg.exe", "query", `HKLM\System\CurrentControlSet\Services\salt-minion`, "/v", "Start"); !strings.Contains(out, "0x4") {
		t.Errorf("the service's Start after session install is not 4 (disabled):\n%s", out)
	}
	if out, code := wc.wine(t, wc.exe, "session", "remove"); code != 0 {
		t.Errorf("salt-minion.exe session remove: exit %d\n%s", code, out)
	}
	if out, code := wc.wine(t, wc.exe, "remove"); code != 0 {
		t.Fatalf("salt-minion.exe remove: exit %d\n%s", code, out)
	}
	if out, code := wc.wine(t, "sc.exe", "query", "salt-minion"); code == 0 {
		t.Errorf("sc query salt-minion after remove: exit 0\n%s", out)
	}
}
