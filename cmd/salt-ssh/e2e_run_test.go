package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// End-to-end tests of the per-run connection settings: remote port
// forwards, ssh_pre_hook and cut-link detection.

// controllerListener serves one line to every connection, on a loopback
// port of the controller that the hosts cannot reach by themselves.
func controllerListener(t *testing.T, line string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, line)
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// readForwarded is a raw command that reads one line from port on the
// host's loopback.
func readForwarded(port int) string {
	return fmt.Sprintf(`bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && head -n 1 <&3'`, port)
}

func TestE2ERemotePortForwards(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	local := controllerListener(t, "hello from the controller")

	// The roster key, on host1 only.
	rport := freePort(t)
	e.writeRoster(map[string]string{"host1": fmt.Sprintf("  remote_port_forwards: %d:127.0.0.1:%d\n", rport, local)})
	got, code, stderr := e.saltSSH("-r", "*", readForwarded(rport))
	h1, _ := got["host1"].(map[string]any)
	if code != 20 || h1 == nil || h1["stdout"] != "hello from the controller\n" {
		t.Fatalf("roster remote_port_forwards: code %d, host1 %v\n%s", code, got["host1"], stderr)
	}
	if h2, _ := got["host2"].(map[string]any); h2 == nil || h2["retcode"] == float64(0) {
		t.Errorf("host2 has no forward but reached the controller: %v", got["host2"])
	}

	// --remote-port-forwards for every host, two forwards in the list.
	e.writeRoster(nil)
	r1, r2 := freePort(t), freePort(t)
	flag := fmt.Sprintf("%d:127.0.0.1:%d,127.0.0.1:%d:localhost:%d", r1, local, r2, local)
	got, code, stderr = e.saltSSH("--remote-port-forwards", flag, "-r", "*", readForwarded(r1)+" && "+readForwarded(r2))
	for _, id := range []string{"host1", "host2"} {
		h, _ := got[id].(map[string]any)
		if code != 0 || h == nil || h["stdout"] != "hello from the controller\nhello from the controller\n" {
			t.Errorf("--remote-port-forwards on %s: code %d, %v\n%s", id, code, got[id], stderr)
		}
	}

	// A bad forward fails its host with a message naming it.
	got, code, _ = e.saltSSH("--remote-port-forwards", "8080", "host1", "test.ping")
	if s := fmt.Sprint(got["host1"]); code != 20 || !strings.Contains(s, `remote port forward "8080"`) {
		t.Errorf("bad forward: code %d, %v", code, got["host1"])
	}
}

func TestE2EPreHook(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	e.writeRoster(map[string]string{
		"host1": "  ssh_pre_hook: echo ran on the controller >> " + marker + "\n",
		"host2": "  ssh_pre_hook: echo no certificate >&2; exit 4\n",
	})
	for run := 1; run <= 2; run++ {
		got, code, stderr := e.saltSSH("*", "test.ping")
		h2, _ := got["host2"].(map[string]any)
		if code != 20 || got["host1"] != true || h2 == nil || h2["stderr"] != "no certificate\n" || h2["retcode"] != float64(4) {
			t.Fatalf("run %d: code %d, %v\n%s", run, code, got, stderr)
		}
		data, _ := os.ReadFile(marker)
		if n := strings.Count(string(data), "ran on the controller\n"); n != run {
			t.Errorf("after run %d the hook ran %d times on the controller", run, n)
		}
	}
	if files := thinFiles(t, e, "host2"); len(files) != 0 {
		t.Errorf("host2's hook failed, yet the host was contacted: its thin_dir holds %v", files)
	}
	if _, err := c.Exec(t.Context(), "host1", "test ! -e "+strconv.Quote(marker)); err != nil {
		t.Errorf("the hook ran on the host: %v", err)
	}
}

// TestE2ECutLinkDetected: with the host's link cut in the middle of a
// command, the keepalive (here 1 s × 2, from the roster) ends the host's
// run as a lost connection instead of waiting for the command or TCP.
// The defaults it stands for are pinned by TestConnectionDefaults.
func TestE2ECutLinkDetected(t *testing.T) {
	c := testhosts.New(t, 2)
	if c.Mode() != testhosts.ModeNetns {
		testhosts.Skip(t, "cutting one host's link needs network namespaces")
	}
	e := newEnv(t, c, true)
	keepalive := "  keepalive_interval: 1\n  keepalive_count_max: 2\n"
	e.writeRoster(map[string]string{"host1": keepalive, "host2": keepalive})
	// The guard only keeps a broken build from hanging: it is far longer
	// than the keepalive bound and shorter than the command.
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	type result struct {
		out  string
		code int
	}
	done := make(chan result, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"-c", e.dir, "--out", "json", "--static", "-r", "*", "touch /tmp/started-cut; sleep 300; echo finished"},
			nil, &stdout, &stderr)
		done <- result{stdout.String() + stderr.String(), code}
	}()
	for {
		_, err1 := c.Exec(t.Context(), "host1", "test -e /tmp/started-cut")
		_, err2 := c.Exec(t.Context(), "host2", "test -e /tmp/started-cut")
		if err1 == nil && err2 == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("run ended before the commands started: %d %s", r.code, r.out)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := c.LinkDown(t.Context(), "host1"); err != nil {
		t.Fatal(err)
	}
	// host2 keeps its link: its command is ended by killing it, so the run
	// can finish.
	var r result
	for {
		select {
		case r = <-done:
		case <-time.After(time.Second):
			c.Exec(t.Context(), "host2", "pkill -f 'sleep 300' || true")
			continue
		}
		break
	}
	if ctx.Err() != nil {
		t.Fatalf("the guard fired: the cut link was not detected: %s", r.out)
	}
	got := map[string]any{}
	if err := json.Unmarshal([]byte(r.out[:strings.LastIndex(r.out, "}")+1]), &got); err != nil {
		t.Fatalf("output: %v\n%s", err, r.out)
	}
	h1, _ := got["host1"].(map[string]any)
	if r.code != 20 || h1 == nil || !strings.Contains(fmt.Sprint(h1["stderr"]), "connection lost") {
		t.Errorf("host1 after its link was cut: code %d, %v", r.code, got["host1"])
	}
}
