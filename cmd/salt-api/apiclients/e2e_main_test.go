// Package apiclients holds salt-api's end-to-end tests with the clients
// Salt users already run: the seed's Python requests class, Debian's
// salt-pepper 0.5.5, curl, and an EventSource in headless Chromium,
// against a real Brine master, real minion processes and salt-api as a
// real process over HTTPS with a self-signed certificate.
//
// The package's tests share one environment, made in TestMain inside a
// private mount namespace whose /etc is an overlay: the PAM users the
// tests log in as (useradd, chpasswd) exist only there, and the master,
// which checks their passwords through libpam, runs there too.
package apiclients

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/apitest"
	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// nsEnv marks the test binary re-run inside the private namespace.
const nsEnv = "BRINE_APICLIENTS_NS"

// The PAM users: apiuser may do everything, limited only test.ping, as
// in the reference's observations of Salt. autouser is the auto eauth's.
const (
	apiUser     = "apiuser"
	limitedUser = "limited"
	autoUser    = "autouser"
)

// env is the shared environment: the cluster, salt-api's URL, the PAM
// passwords, and why it could not be made ("" when it was).
type env struct {
	api      *apitest.API
	c        *clustertest.Cluster
	conf     string // certificate, static files, known_hosts
	rosters  string // the master's rosters: directory
	url      string
	passwd   map[string]string
	minions  []string
	unusable string // why this machine cannot run the tests (a skip)
	broken   string // why setup failed here (a failure)
}

var shared env

func TestMain(m *testing.M) {
	switch {
	case os.Geteuid() != 0:
		shared.unusable = "needs root (PAM users live in a private mount namespace)"
	case os.Getenv(nsEnv) != "1":
		os.Exit(reexecPrivate())
	}
	mt := &mainT{}
	if shared.unusable == "" {
		if err := mt.run(func() { setup(mt) }); err != nil {
			shared.broken = err.Error()
		}
	}
	code := m.Run()
	mt.cleanup(code != 0)
	os.Exit(code)
}

// need skips t through testhosts.Skip when the environment is unusable.
func need(t *testing.T) *env {
	t.Helper()
	if shared.unusable != "" {
		testhosts.Skip(t, "salt-api client tests: "+shared.unusable)
	}
	if shared.broken != "" {
		t.Fatalf("salt-api client tests: setup: %s", shared.broken)
	}
	return &shared
}

// reexecPrivate runs this test binary again in a new mount namespace with
// /etc and /home overlaid on upper directories in a temporary directory
// (removed afterwards), and returns its exit code.
func reexecPrivate() int {
	dir, err := os.MkdirTemp("", "apiclients-ns")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	var script strings.Builder
	for i, d := range []string{"/etc", "/home"} {
		fmt.Fprintf(&script, "mkdir -p %[1]s/%[2]d/u %[1]s/%[2]d/w\nmount -t overlay apiclients -o lowerdir=%[3]s,upperdir=%[1]s/%[2]d/u,workdir=%[1]s/%[2]d/w %[3]s\n", dir, i, d)
	}
	script.WriteString(`exec "$@"` + "\n")
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-ec", script.String(), "sh", os.Args[0])
	cmd.Args = append(cmd.Args, os.Args[1:]...)
	cmd.Env = append(os.Environ(), nsEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "apiclients: private namespace:", err)
		return 1
	}
	return 0
}

// setup makes the users and the cluster with three minions (m1 and m2
// with grain role web, m3 role db) behind salt-api, which also serves
// the browser test's page.
func setup(t *mainT) {
	shared.passwd = map[string]string{}
	for _, u := range []string{apiUser, limitedUser} {
		shared.passwd[u] = addPAMUser(t, u)
	}
	shared.passwd[autoUser] = "anything"
	conf := t.TempDir()
	static := filepath.Join(conf, "static")
	rosters := filepath.Join(conf, "rosters")
	for _, d := range []string{static, rosters} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeStatic(t, static)
	os.Setenv("BRINE_THIN_DIR", buildThin(t))
	a := apitest.Start(t, apitest.Options{
		MasterConf: fmt.Sprintf(masterConf, rosters, rosters, conf),
		APIConf:    fmt.Sprintf("  max_request_body_size: 65536\n  static: %s\n  static_path: /static\n  app: %s/index.html\n", static, static),
	})
	shared.api, shared.c, shared.conf, shared.rosters, shared.url = a, a.Cluster, conf, rosters, a.URL
	shared.minions = []string{"m1", "m2", "m3"}
	for i, id := range shared.minions {
		role := "web"
		if i == 2 {
			role = "db"
		}
		a.StartMinion(id, a.MinionConf(id, id, "grains: {role: "+role+"}\n"))
	}
	a.PingUntil("*", shared.minions...)
}

// masterConf is the master's config beyond clustertest's: eauth for the
// PAM and auto users, every netapi client, and the rosters salt-ssh
// through the API may use.
const masterConf = `auto_accept: True
external_auth:
  pam:
    apiuser: ['.*', '@runner', '@wheel', '@jobs']
    limited: ['test.ping']
  auto:
    autouser: ['.*', '@runner', '@wheel', '@jobs']
netapi_enable_clients: [local, local_async, local_batch, local_subset, runner, runner_async, wheel, wheel_async, ssh]
rosters: [%s]
roster_file: %s/roster
known_hosts_file: %s/known_hosts
`

// addPAMUser adds a user without a home to this namespace's /etc with a
// random password, set through chpasswd's standard input so it never
// reaches an argument list, and returns the password.
func addPAMUser(t *mainT, name string) string {
	if out, err := exec.Command("useradd", "-M", "-s", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	b := make([]byte, 12)
	rand.Read(b)
	pw := hex.EncodeToString(b)
	cmd := exec.Command("chpasswd")
	cmd.Stdin = strings.NewReader(name + ":" + pw + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chpasswd %s: %v\n%s", name, err, out)
	}
	return pw
}

func writeFile(t interface{ Fatal(...any) }, path string, data []byte, mode os.FileMode) {
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

// buildThin builds the thin binary salt-ssh through the API deploys.
func buildThin(t *mainT) string {
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "salt-thin-linux-"+runtime.GOARCH), "github.com/brinesalt/brine/cmd/salt-thin")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build thin: %v\n%s", err, out)
	}
	return dir
}

// extraAPI starts another salt-api on the shared master, its
// rest_cherrypy section the shared one's plus extra, on a port of its
// own, and returns its URL; it stops with the test.
func (e *env) extraAPI(t *testing.T, extra string) string {
	t.Helper()
	conf, err := os.ReadFile(filepath.Join(e.c.Dir, "master/master"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	text := strings.Replace(string(conf), fmt.Sprintf("  port: %d\n", e.api.Port), fmt.Sprintf("  port: %d\n", port)+extra, 1)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "master"), []byte(text), 0o600)
	cmd := exec.Command(filepath.Join(e.c.Bin, "salt-api"), "-c", dir, "-l", "info")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if t.Failed() {
			t.Logf("extra salt-api:\n%s", out.String())
		}
	})
	url := fmt.Sprintf("https://127.0.0.1:%d", port)
	testhosts.Eventually(t, "the extra salt-api", 30*time.Second, func() bool {
		status, _, _ := request("GET", url+"/", nil, nil)
		return status != 0
	})
	return url
}
