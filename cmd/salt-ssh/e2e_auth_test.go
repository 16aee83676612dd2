package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// End-to-end tests of the transport's real-world features: passwords and
// key deployment, encrypted keys, ssh-agent, ProxyJump through hosts the
// controller cannot reach, ~/.ssh/config, @cert-authority, and that no
// secret ends up anywhere.

// useConfig writes the env's roster and a master config with extra lines.
func (e *env) useConfig(roster, extraMaster string) {
	e.t.Helper()
	path := filepath.Join(e.dir, "roster")
	if err := os.WriteFile(path, []byte(roster), 0o600); err != nil {
		e.t.Fatal(err)
	}
	conf := fmt.Sprintf("pki_dir: %s/pki\ncachedir: %s/cache\nknown_hosts_file: %s\nroster_file: %s\nssh_log_file: %s/ssh.log\n%s",
		e.dir, e.dir, e.known, path, e.dir, extraMaster)
	if err := os.WriteFile(filepath.Join(e.dir, "master"), []byte(conf), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// hostEntry is a roster entry for host id with the given extra lines.
func hostEntry(h testhosts.Host, user, extra string) string {
	return fmt.Sprintf("%s:\n  host: %s\n  port: %d\n  user: %s\n  sudo: True\n%s", h.ID, h.IP, h.Port, user, extra)
}

// authorizedKeys reads the login user's ~/.ssh/authorized_keys on a host.
func authorizedKeys(t *testing.T, c *testhosts.Cluster, id string) string {
	t.Helper()
	out, err := c.Exec(context.Background(), id,
		`cat "$(getent passwd `+c.User()+` | cut -d: -f6)/.ssh/authorized_keys" 2>/dev/null || true`)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// authorize appends pub to the login user's authorized_keys on a host.
func authorize(t *testing.T, c *testhosts.Cluster, id string, pub ssh.PublicKey) {
	t.Helper()
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	script := fmt.Sprintf(`h=$(getent passwd %[1]s | cut -d: -f6); mkdir -p "$h/.ssh" && echo '%[2]s' >> "$h/.ssh/authorized_keys" && chown -R %[1]s "$h/.ssh"`, c.User(), line)
	if _, err := c.Exec(context.Background(), id, script); err != nil {
		t.Fatal(err)
	}
}

// encryptedKey writes a new ed25519 key encrypted with pass into dir.
func encryptedKey(t *testing.T, dir, pass string) (string, ed25519.PrivateKey, ssh.PublicKey) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "e2e", []byte(pass))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ssh.NewSignerFromKey(priv)
	p := filepath.Join(dir, "id_enc")
	if err := os.WriteFile(p, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".pub", ssh.MarshalAuthorizedKey(s.PublicKey()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, priv, s.PublicKey()
}

// startAgent serves an in-process ssh-agent holding keys and points
// SSH_AUTH_SOCK at it for the test.
func startAgent(t *testing.T, keys ...any) {
	t.Helper()
	ring := agent.NewKeyring()
	for _, k := range keys {
		if err := ring.Add(agent.AddedKey{PrivateKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				agent.ServeAgent(ring, c)
				c.Close()
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	t.Setenv("SSH_AUTH_SOCK", sock)
}

func hostErr(got map[string]any, id string) string { return fmt.Sprint(got[id]) }

func TestE2EKeyDeployWithPassword(t *testing.T) {
	c := testhosts.New(t, 1, testhosts.WithHost("host1", testhosts.HostOptions{PasswordAuth: true}))
	e := newEnv(t, c, true)
	t.Setenv("SSH_AUTH_SOCK", "")
	h, _ := c.Host("host1")
	e.useConfig(hostEntry(h, c.User(), ""), "") // the default salt-ssh key, not authorized yet

	got, code, _ := e.saltSSH("host1", "test.ping")
	if code != 20 || !strings.Contains(hostErr(got, "host1"), "--key-deploy") {
		t.Fatalf("key not deployed yet: code %d, %v", code, got)
	}
	got, code, stderr := e.saltSSH("--key-deploy", "--passwd", c.Password(), "host1", "test.ping")
	if code != 0 || got["host1"] != true {
		t.Fatalf("--key-deploy: code %d, %v\n%s", code, got, stderr)
	}
	pub, err := os.ReadFile(filepath.Join(e.dir, "pki", "ssh", "salt-ssh.rsa.pub"))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(pub))
	ak := authorizedKeys(t, c, "host1")
	if strings.Count(ak, fields[1]) != 1 {
		t.Fatalf("authorized_keys after deploy:\n%s", ak)
	}
	// Key only from now on; deploying again adds nothing.
	if got, code, _ := e.saltSSH("host1", "test.ping"); code != 0 || got["host1"] != true {
		t.Fatalf("key-only run after deploy: code %d, %v", code, got)
	}
	e.saltSSH("--key-deploy", "--passwd", c.Password(), "host1", "test.ping")
	if ak := authorizedKeys(t, c, "host1"); strings.Count(ak, fields[1]) != 1 {
		t.Errorf("second deploy duplicated the key:\n%s", ak)
	}
	got, code, _ = e.saltSSH("--passwd", "not-the-password", "--priv", filepath.Join(e.dir, "nokey"), "host1", "test.ping")
	if code != 20 || !strings.Contains(hostErr(got, "host1"), "nokey") {
		t.Errorf("unreadable key: code %d, %v", code, got)
	}
}

func TestE2EEncryptedKeyAndAgent(t *testing.T) {
	c := testhosts.New(t, 1)
	e := newEnv(t, c, true)
	t.Setenv("SSH_AUTH_SOCK", "")
	h, _ := c.Host("host1")
	const pass = "e2e key passphrase"
	keyPath, priv, pub := encryptedKey(t, t.TempDir(), pass)
	authorize(t, c, "host1", pub)

	e.useConfig(hostEntry(h, c.User(), "  priv: "+keyPath+"\n  priv_passwd: "+pass+"\n"), "")
	if got, code, stderr := e.saltSSH("host1", "test.ping"); code != 0 || got["host1"] != true {
		t.Fatalf("roster priv_passwd: code %d, %v\n%s", code, got, stderr)
	}
	e.useConfig(hostEntry(h, c.User(), "  priv: "+keyPath+"\n"), "")
	if got, code, _ := e.saltSSH("--priv-passwd", pass, "host1", "test.ping"); code != 0 || got["host1"] != true {
		t.Fatalf("--priv-passwd: code %d, %v", code, got)
	}
	got, code, _ := e.saltSSH("host1", "test.ping")
	if code != 20 || !strings.Contains(hostErr(got, "host1"), "passphrase") {
		t.Errorf("encrypted key without passphrase: code %d, %v", code, got)
	}

	e.useConfig(hostEntry(h, c.User(), "  priv: agent-forwarding\n"), "")
	startAgent(t)
	got, code, _ = e.saltSSH("host1", "test.ping")
	if code != 20 || !strings.Contains(hostErr(got, "host1"), "holds no keys") {
		t.Errorf("empty agent: code %d, %v", code, got)
	}
	startAgent(t, priv)
	if got, code, stderr := e.saltSSH("host1", "test.ping"); code != 0 || got["host1"] != true {
		t.Fatalf("ssh-agent: code %d, %v\n%s", code, got, stderr)
	}
	// The encrypted key file without its passphrase is signed by the agent.
	e.useConfig(hostEntry(h, c.User(), "  priv: "+keyPath+"\n  identities_only: True\n"), "")
	if got, code, stderr := e.saltSSH("host1", "test.ping"); code != 0 || got["host1"] != true {
		t.Fatalf("encrypted key held by the agent: code %d, %v\n%s", code, got, stderr)
	}
}

func TestE2EProxyJump(t *testing.T) {
	c := testhosts.New(t, 3,
		testhosts.WithHost("host2", testhosts.HostOptions{BehindHost: "host1"}),
		testhosts.WithHost("host3", testhosts.HostOptions{BehindHost: "host2"})) // BehindHost: New skips without netns
	e := newEnv(t, c, true)
	t.Setenv("SSH_AUTH_SOCK", "")
	h1, _ := c.Host("host1")
	h2, _ := c.Host("host2")
	h3, _ := c.Host("host3")
	u := c.User()
	priv := "  priv: " + c.KeyPath() + "\n"

	// One hop from the roster's ssh_options, two from --ssh-option.
	e.useConfig(hostEntry(h2, u, priv+"  ssh_options:\n    - ProxyJump="+u+"@"+h1.IP+":22\n")+hostEntry(h3, u, priv), "")
	if got, code, stderr := e.saltSSH("host2", "cmd.run", "hostname"); code != 0 || got["host2"] != "host2" {
		t.Fatalf("one hop: code %d, %v\n%s", code, got, stderr)
	}
	if got, code, stderr := e.saltSSH("--ssh-option", "ProxyJump="+u+"@"+h1.IP+","+u+"@"+h2.IP, "host3", "cmd.run", "hostname"); code != 0 || got["host3"] != "host3" {
		t.Fatalf("two hops: code %d, %v\n%s", code, got, stderr)
	}
	// Without the jump host the target is unreachable.
	e.useConfig(hostEntry(h3, u, priv+"  timeout: 2\n"), "")
	if _, code, _ := e.saltSSH("host3", "test.ping"); code != 20 {
		t.Errorf("host3 reached without ProxyJump")
	}
	// The harness's roster carries the chains: every host at once.
	e.useConfig(mustRead(t, c.RosterPath()), "")
	if got, code, stderr := e.saltSSH("*", "test.ping"); code != 0 || len(got) != 3 {
		t.Fatalf("harness roster: code %d, %v\n%s", code, got, stderr)
	}
	// The chain from ~/.ssh/config: the alias's ProxyJump names another
	// alias, resolved through the config too.
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeTestFile(t, filepath.Join(home, ".ssh", "config"), fmt.Sprintf(
		"Host inner\n  HostName %s\n  ProxyJump middle\nHost middle\n  HostName %s\n  User %s\n  ProxyJump %s@%s\n",
		h3.IP, h2.IP, u, u, h1.IP))
	e.useConfig("deep:\n  host: inner\n  user: "+u+"\n"+priv+"  sudo: True\n",
		"ssh_config_file: "+filepath.Join(home, ".ssh", "config")+"\n")
	if got, code, stderr := e.saltSSH("deep", "cmd.run", "hostname"); code != 0 || got["deep"] != "host3" {
		t.Fatalf("ProxyJump from ssh_config: code %d, %v\n%s", code, got, stderr)
	}
	// A loop, and a bastion that is down, fail per host naming the hop.
	// (A roster entry's own ssh_options come before --ssh-option, and the
	// first ProxyJump wins, so this entry has none.)
	e.useConfig(hostEntry(h2, u, priv), "")
	got, code, _ := e.saltSSH("--ssh-option", "ProxyJump="+u+"@"+h1.IP+","+u+"@"+h1.IP, "host2", "test.ping")
	if code != 20 || !strings.Contains(hostErr(got, "host2"), "loop") {
		t.Errorf("loop: code %d, %v", code, got)
	}
	e.useConfig(mustRead(t, c.RosterPath()), "")
	if err := c.StopHost(context.Background(), "host1"); err != nil {
		t.Fatal(err)
	}
	got, code, _ = e.saltSSH("*", "test.ping")
	if code != 20 || !strings.Contains(hostErr(got, "host3"), h1.IP) || !strings.Contains(hostErr(got, "host3"), "ProxyJump") {
		t.Errorf("bastion down: code %d, %v", code, got)
	}
}

func TestE2ESSHConfigAliasWithInclude(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	t.Setenv("SSH_AUTH_SOCK", "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	h1, _ := c.Host("host1")
	h2, _ := c.Host("host2")
	writeTestFile(t, filepath.Join(home, ".ssh", "config"), "Include conf.d/*.conf\nHost *\n  User nobody-by-default\n")
	writeTestFile(t, filepath.Join(home, ".ssh", "conf.d", "lab.conf"), fmt.Sprintf(`
Host web
  HostName %s
  Port %d
  User %s
  IdentityFile %s
Match host db user %s
  HostName %s
  Port %d
  IdentityFile %s
`, h1.IP, h1.Port, c.User(), c.KeyPath(), c.User(), h2.IP, h2.Port, c.KeyPath()))
	roster := "web:\n  host: web\n  sudo: True\ndb:\n  host: db\n  user: " + c.User() + "\n  sudo: True\n"
	e.useConfig(roster, "ssh_config_file: "+filepath.Join(home, ".ssh", "config")+"\n")
	got, code, stderr := e.saltSSH("*", "cmd.run", "hostname")
	if code != 0 || got["web"] != "host1" || got["db"] != "host2" {
		t.Fatalf("ssh_config aliases: code %d, %v\n%s", code, got, stderr)
	}
}

func TestE2ECertAuthority(t *testing.T) {
	// Port 22 (ModeNetns): knownhosts compares ports exactly.
	c := testhosts.New(t, 1, testhosts.WithMode(testhosts.ModeNetns),
		testhosts.WithHost("host1", testhosts.HostOptions{HostCert: true}))
	e := newEnv(t, c, false)
	t.Setenv("SSH_AUTH_SOCK", "")
	caLine := "@cert-authority 10.250.* " + string(ssh.MarshalAuthorizedKey(c.HostCA()))
	writeTestFile(t, e.known, caLine)
	if got, code, stderr := e.saltSSH("host1", "test.ping"); code != 0 || got["host1"] != true {
		t.Fatalf("@cert-authority: code %d, %v\n%s", code, got, stderr)
	}
	if got := mustRead(t, e.known); got != caLine {
		t.Errorf("known_hosts changed:\n%s", got)
	}
	// Another CA: the host is unknown.
	other, _, _ := encryptedKey(t, t.TempDir(), "x")
	otherPub, _ := os.ReadFile(other + ".pub")
	writeTestFile(t, e.known, "@cert-authority 10.250.* "+string(otherPub))
	got, code, _ := e.saltSSH("host1", "test.ping")
	if code != 20 || !strings.Contains(hostErr(got, "host1"), "-i flag") {
		t.Errorf("untrusted CA: code %d, %v", code, got)
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
