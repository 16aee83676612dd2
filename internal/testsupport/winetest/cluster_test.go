//go:build !windows

package winetest_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	wc.WaitFor("win1 pending", func() bool {
		out, _ := wc.Run("salt-key", "-l", "pre")
		return strings.Contains(out, "win1")
	})
	if out, code := wc.Run("salt-key", "-y", "-a", "win1"); code != 0 {
		t.Fatalf("salt-key -a win1: exit %d\n%s", code, out)
	}
	wc.PingUntil("win1", "win1")
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
	wc.WaitFor("win1 pending", func() bool {
		out, _ := wc.Run("salt-key", "-l", "pre")
		return strings.Contains(out, "win1")
	})
	wc.Run("salt-key", "-y", "-a", "win1")
	wc.PingUntil("win1", "win1")
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
