package sshconn

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSSHConfigLookup(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh", "conf.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, ".ssh", "conf.d", "10-web.conf"), `
Host web*
  HostName %h.internal
  User deploy
  IdentityFile ~/.ssh/web_%r
Match host db1,db2 user admin
  Port 2200
`)
	writeFile(t, filepath.Join(home, ".ssh", "config"), `
Include conf.d/*.conf
Host alias
  HostName 10.0.0.7
  Port 2222
  ProxyJump ops@bastion:22
  IdentitiesOnly yes
  IdentityFile ~/.ssh/alias_key
  CertificateFile %d/.ssh/alias-cert.pub
  StrictHostKeyChecking accept-new
  UserKnownHostsFile ~/.ssh/kh_%n /dev/null
Host !nope *
  IdentityFile ~/.ssh/id_%u_%h
  ConnectTimeout 7
  ServerAliveInterval 30
Match exec "true"
  User never
Match all
  User fallback
`)
	sc, err := LoadSSHConfig(filepath.Join(home, ".ssh", "config"), home)
	if err != nil {
		t.Fatal(err)
	}
	local := localUserName()
	ssh := filepath.Join(home, ".ssh")
	tests := []struct {
		alias, user string
		want        HostConfig
	}{
		{"alias", "", HostConfig{
			HostName: "10.0.0.7", Port: 2222, User: "fallback", ProxyJump: "ops@bastion:22", IdentitiesOnly: "yes",
			IdentityFiles:         []string{ssh + "/alias_key", ssh + "/id_" + local + "_10.0.0.7"},
			CertificateFiles:      []string{ssh + "/alias-cert.pub"},
			StrictHostKeyChecking: "accept-new",
			UserKnownHostsFiles:   []string{ssh + "/kh_alias", "/dev/null"},
			ConnectTimeout:        7 * time.Second, ServerAliveInterval: 30 * time.Second,
		}},
		{"web1", "", HostConfig{
			HostName: "web1.internal", User: "deploy",
			IdentityFiles:  []string{ssh + "/web_deploy", ssh + "/id_" + local + "_web1.internal"},
			ConnectTimeout: 7 * time.Second, ServerAliveInterval: 30 * time.Second,
		}},
		{"db2", "admin", HostConfig{
			Port: 2200, User: "fallback",
			IdentityFiles:  []string{ssh + "/id_" + local + "_db2"},
			ConnectTimeout: 7 * time.Second, ServerAliveInterval: 30 * time.Second,
		}},
		{"db2", "other", HostConfig{
			User:           "fallback",
			IdentityFiles:  []string{ssh + "/id_" + local + "_db2"},
			ConnectTimeout: 7 * time.Second, ServerAliveInterval: 30 * time.Second,
		}},
		{"nope", "", HostConfig{User: "fallback"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, sc.Lookup(tc.alias, tc.user)); diff != "" {
			t.Errorf("Lookup(%q, %q) (-want +got):\n%s", tc.alias, tc.user, diff)
		}
	}
}

func TestSSHConfigMissingAndBroken(t *testing.T) {
	dir := t.TempDir()
	sc, err := LoadSSHConfig(filepath.Join(dir, "none"), dir)
	if err != nil || sc.File != "" {
		t.Fatalf("missing file: %v, %+v", err, sc)
	}
	if got := sc.Lookup("x", ""); !cmp.Equal(got, HostConfig{}) {
		t.Errorf("Lookup on an empty config = %+v", got)
	}
	bad := filepath.Join(dir, "bad")
	writeFile(t, bad, "Match\n")
	if _, err := LoadSSHConfig(bad, dir); err == nil {
		t.Error("Match without criteria accepted")
	}
	main := filepath.Join(dir, "main")
	writeFile(t, main, "Include "+bad+"\nHost x\n  Port 2\n")
	sc, err = LoadSSHConfig(main, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Lookup("x", ""); got.Port != 2 || len(got.Warnings) != 1 {
		t.Errorf("broken Include: %+v, want Port 2 and one warning", got)
	}
}

func FuzzSSHConfig(f *testing.F) {
	f.Add("Host a b*\n  HostName %h.x\nMatch host a,!b user u\n  Port 22\nInclude nothing\n")
	f.Add("Match exec \"x\"\nIdentityFile ~/%r/%u/%%\n")
	f.Fuzz(func(t *testing.T, src string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "config")
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		sc, err := LoadSSHConfig(p, dir)
		if err != nil {
			return
		}
		sc.Lookup("a", "")
		sc.Lookup("b", "u")
	})
}
