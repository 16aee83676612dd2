package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
)

// startMaster runs a real master on loopback with file_roots srv and
// pillar_roots pillar under dir; it returns the ports it listens on.
func startMaster(t *testing.T, dir string, autoAccept bool) (pub, ret int) {
	t.Helper()
	mo := master.DefaultOptions()
	mo.Interface, mo.PublishPort, mo.RetPort = "127.0.0.1", 0, 0
	mo.PKIDir, mo.CacheDir, mo.SockDir = dir+"/mpki", dir+"/mcache", dir+"/msock"
	mo.FileRoots, mo.PillarRoots = map[string][]string{"base": {dir + "/srv"}}, map[string][]string{"base": {dir + "/pillar"}}
	mo.Auth.AutoAccept = autoAccept
	m, err := master.New(mo, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(); cancel() })
	return m.PublishAddr().(*net.TCPAddr).Port, m.RetAddr().(*net.TCPAddr).Port
}

// minionConf writes a minion configuration for id against the master
// and returns its directory. file_roots and pillar_roots point at local
// trees that must not be used.
func minionConf(t *testing.T, dir, id string, pub, ret int) string {
	conf := filepath.Join(dir, "conf-"+id)
	writeFile(t, filepath.Join(dir, "local-pillar", "top.sls"), "base:\n  '*':\n    - p\n")
	writeFile(t, filepath.Join(dir, "local-pillar", "p.sls"), "from: the minion's own pillar_roots\n")
	writeFile(t, filepath.Join(conf, "minion"), fmt.Sprintf("id: %s\nmaster: 127.0.0.1\nmaster_port: %d\npublish_port: %d\n"+
		"pki_dir: %s/pki-%s\ncachedir: %s/cache-%s\nacceptance_wait_time: 0.2\npillar_roots:\n  base:\n    - %s/local-pillar\n",
		id, ret, pub, dir, id, dir, id, dir))
	return conf
}

func callJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), append([]string{"--out=json"}, args...), nil, &out, &errb); code != 0 {
		t.Fatalf("salt-call %v: exit %d: %s", args, code, errb.String())
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("salt-call %v: %v: %s", args, err, out.String())
	}
	return v
}

// TestRemote runs salt-call without --local against a real master:
// each minion sees the pillar the master compiles for it alone, and
// state.apply renders an SLS and manages a file both served by the
// master, the second time from the minion's cache.
func TestRemote(t *testing.T) {
	dir := t.TempDir()
	pub, ret := startMaster(t, dir, true)
	out := filepath.Join(dir, "out")
	writeFile(t, filepath.Join(dir, "pillar", "top.sls"), "base:\n  web1:\n    - web1\n  db1:\n    - db1\n")
	writeFile(t, filepath.Join(dir, "pillar", "web1.sls"), "secret: web1-only\nrole: web\n")
	writeFile(t, filepath.Join(dir, "pillar", "db1.sls"), "secret: db1-only\n")
	writeFile(t, filepath.Join(dir, "srv", "motd.sls"), "motd:\n  file.managed:\n    - name: "+out+"/{{ grains['id'] }}\n    - source: salt://files/motd\n    - template: jinja\n    - makedirs: True\n")
	writeFile(t, filepath.Join(dir, "srv", "files", "motd"), "role {{ pillar['role'] }}\n")
	web, db := minionConf(t, dir, "web1", pub, ret), minionConf(t, dir, "db1", pub, ret)

	p := callJSON(t, "-c", web, "pillar.items")["local"].(map[string]any)
	if len(p) != 2 || p["secret"] != "web1-only" || p["role"] != "web" {
		t.Fatalf("web1 pillar.items = %v", p)
	}
	if p := callJSON(t, "-c", db, "pillar.items")["local"].(map[string]any); len(p) != 1 || p["secret"] != "db1-only" {
		t.Fatalf("db1 pillar.items = %v", p)
	}

	applied := callJSON(t, "-c", web, "state.apply", "motd")["local"].(map[string]any)
	for _, v := range applied {
		if r := v.(map[string]any); r["result"] != true {
			t.Fatalf("state.apply: %v", r)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "web1")); string(b) != "role web\n" {
		t.Fatalf("managed file holds %q", b)
	}
	cached := filepath.Join(dir, "cache-web1", "files", "base", "files", "motd")
	st1, err := os.Stat(cached)
	if err != nil {
		t.Fatal(err)
	}
	callJSON(t, "-c", web, "state.apply", "motd")
	if st2, err := os.Stat(cached); err != nil || !os.SameFile(st1, st2) {
		t.Fatalf("second run fetched the unchanged file again (%v)", err)
	}
	if got := callJSON(t, "-c", web, "cp.get_file_str", "salt://files/motd")["local"]; got != "role {{ pillar['role'] }}\n" {
		t.Fatalf("cp.get_file_str = %v", got)
	}
}

// TestRemoteNotAccepted checks salt-call against a master that has not
// accepted the key: Salt's message and status 2.
func TestRemoteNotAccepted(t *testing.T) {
	dir := t.TempDir()
	pub, ret := startMaster(t, dir, false)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-c", minionConf(t, dir, "new1", pub, ret), "test.ping"}, nil, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "has the minion key been accepted?") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

// TestRemoteNoMaster checks salt-call where no master answers: a port
// that refuses connections and one that accepts them and stays silent
// each give an error naming the address and exit 1.
func TestRemoteNoMaster(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	silentPort := silent.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		port int
		want string
	}{
		{1, "connect to 127.0.0.1:1: "},
		{silentPort, fmt.Sprintf("connect to 127.0.0.1:%d: no answer from the master within 700ms", silentPort)},
	} {
		dir := t.TempDir()
		conf := minionConf(t, dir, "lonely", tc.port, tc.port)
		writeFile(t, filepath.Join(conf, "minion.d", "timeout.conf"), "auth_timeout: 0.1\n")
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"-c", conf, "test.ping"}, nil, &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("port %d: exit %d, stderr %q", tc.port, code, errb.String())
		}
	}
}

// TestRemoteBesideRunningMinion runs salt-call while the salt-minion
// daemon of the same id holds its connection to the master: the
// master's ROUTER ignores a second peer announcing an identity already
// connected (libzmq's default), so salt-call must not announce one, as
// Salt's request socket does not.
func TestRemoteBesideRunningMinion(t *testing.T) {
	dir := t.TempDir()
	pub, ret := startMaster(t, dir, true)
	conf := minionConf(t, dir, "web1", pub, ret)
	c, err := config.LoadMinion(conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	daemon, err := minion.New(minion.Options{Config: c})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- daemon.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	for daemon.Pending() != 0 || !signedIn(dir) {
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not sign in")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := callJSON(t, "-c", conf, "test.ping")["local"]; got != true {
		t.Fatalf("test.ping beside the daemon = %v", got)
	}
}

// signedIn reports whether web1's daemon has pinned the master key and
// so holds its request connection.
func signedIn(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "pki-web1", "minion_master.pub"))
	return err == nil
}
