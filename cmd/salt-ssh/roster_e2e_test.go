package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// The roster backends and roster flags end to end: each run is salt-ssh's
// run() against real sshd hosts, and the test checks which hosts answered.

func (e *env) write(name, body string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// pinged runs test.ping with args and returns the IDs that answered True.
func (e *env) pinged(args ...string) []string {
	e.t.Helper()
	got, code, stderr := e.saltSSH(append(args, "test.ping")...)
	var ids []string
	for id, v := range got {
		if v == true {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if code != 0 {
		e.t.Errorf("salt-ssh %v: exit %d, %v\n%s", args, code, got, stderr)
	}
	return ids
}

func expectIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: answered %v, want %v", what, got, want)
	}
}

func TestE2EAnsibleRoster(t *testing.T) {
	c := testhosts.New(t, 3)
	e := newEnv(t, c, true)
	var b strings.Builder
	hosts := c.Hosts()
	fmt.Fprintf(&b, "[web]\nweb1 ansible_host=%s ansible_port=%d\nweb2 ansible_host=%s ansible_port=%d\n", hosts[0].IP, hosts[0].Port, hosts[1].IP, hosts[1].Port)
	fmt.Fprintf(&b, "[db]\ndb1 ansible_ssh_host=%s ansible_ssh_port=%d\n", hosts[2].IP, hosts[2].Port)
	fmt.Fprintf(&b, "[all:vars]\nansible_user=%s\nansible_ssh_private_key_file=%s\n", c.User(), c.KeyPath())
	inv := e.write("inventory", b.String())

	expectIDs(t, "-N web", e.pinged("--roster", "ansible", "--roster-file", inv, "-N", "web"), "web1", "web2")
	expectIDs(t, "glob", e.pinged("--roster", "ansible", "--roster-file", inv, "*1"), "db1", "web1")
	// flat from roster_file, ansible from its own file.
	expectIDs(t, "flat,ansible=FILE", e.pinged("--roster", "flat,ansible="+inv, "*"),
		"db1", "host1", "host2", "host3", "web1", "web2")
}

func TestE2ESSHConfigRoster(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	var b strings.Builder
	for i, h := range c.Hosts() {
		fmt.Fprintf(&b, "Host box%d\n  HostName %s\n  Port %d\n", i+1, h.IP, h.Port)
	}
	fmt.Fprintf(&b, "Host box*\n  User %s\n  IdentityFile %s\n", c.User(), c.KeyPath())
	cfg := e.write("ssh_config", b.String())
	e.writeMaster("ssh_config_file: " + cfg + "\n")
	expectIDs(t, "sshconfig", e.pinged("--roster", "sshconfig", "box*"), "box1", "box2")
}

func TestE2EScanRoster(t *testing.T) {
	// Scan needs the hosts on their own addresses.
	c := testhosts.New(t, 3, testhosts.WithMode(testhosts.ModeNetns))
	e := newEnv(t, c, true)
	var want []string
	for _, h := range c.Hosts() {
		want = append(want, h.IP)
	}
	slices.Sort(want)
	subnet := fmt.Sprintf("10.250.%d.0/24", c.Number())
	e.writeMaster("ssh_scan_timeout: 2\n")
	got := e.pinged("--roster", "scan", "--user", c.User(), "--priv", c.KeyPath(), subnet)
	got = slices.DeleteFunc(got, func(s string) bool { return s == c.ControllerIP() })
	expectIDs(t, "scan "+subnet, got, want...)
}

func TestE2EUpdateRoster(t *testing.T) {
	// An ad-hoc target has port 22 (ModeNetns).
	c := testhosts.New(t, 1, testhosts.WithMode(testhosts.ModeNetns))
	e := newEnv(t, c, true)
	h := c.Hosts()[0]
	ros := filepath.Join(e.dir, "new-roster")
	auth := []string{"--roster-file", ros, "--priv", c.KeyPath()}
	expectIDs(t, "ad-hoc", e.pinged(append(auth, "--update-roster", c.User()+"@"+h.IP)...), h.IP)
	data, err := os.ReadFile(ros)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%s:\n    host: %s\n    user: %s\n", h.IP, h.IP, c.User()); !strings.Contains(string(data), want) {
		t.Errorf("roster after --update-roster:\n%s\nwant it to hold\n%s", data, want)
	}
	// The user now comes from the roster entry.
	expectIDs(t, "from the roster", e.pinged(append(auth, h.IP)...), h.IP)
}

func TestE2ENodegroups(t *testing.T) {
	c := testhosts.New(t, 3)
	e := newEnv(t, c, true)
	e.writeMaster("nodegroups:\n  web: 'host1 or L@host2'\n  notweb: 'not N@web'\nssh_list_nodegroups:\n  db: [host3]\n")
	expectIDs(t, "-N web", e.pinged("-N", "web"), "host1", "host2")
	expectIDs(t, "-N notweb", e.pinged("-N", "notweb"), "host3")
	expectIDs(t, "-N db", e.pinged("-N", "db"), "host3")
}

func TestE2ESaltfile(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	sf := e.write("Saltfile", fmt.Sprintf("salt-ssh:\n  config_dir: %s\n  list: true\n  output: json\n  static: true\n", e.dir))
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--saltfile", sf, "host1,host2", "test.ping"}, nil, &stdout, &stderr)
	got := map[string]any{}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, stdout.String(), stderr.String())
	}
	if got["host1"] != true || got["host2"] != true || len(got) != 2 {
		t.Errorf("Saltfile run: %v", got)
	}
}
