package sshrun

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec/sshconn"
)

// testDialer is a dialer over an ssh_config file in a temp home.
func testDialer(t *testing.T, sshConfig string) (*dialer, string, *bytes.Buffer) {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"salt-ssh.rsa", "id_cfg", "id_opt", "id_bastion"} {
		if err := os.WriteFile(filepath.Join(home, ".ssh", k), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(home, ".ssh", "config")
	if err := os.WriteFile(file, []byte(sshConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := sshconn.LoadSSHConfig(file, home)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	return &dialer{sshConfig: sc, log: slog.New(slog.NewTextHandler(&logs, nil))}, home, &logs
}

func TestDialerPrecedence(t *testing.T) {
	d, home, logs := testDialer(t, `
Host web
  HostName 10.1.1.1
  Port 2201
  User cfguser
  IdentityFile ~/.ssh/id_cfg
  IdentityFile ~/.ssh/missing
  StrictHostKeyChecking accept-new
  UserKnownHostsFile ~/.ssh/kh_web
  ProxyJump bastion
Host bastion
  HostName 10.1.1.254
  User jump
  IdentityFile ~/.ssh/id_bastion
`)
	ssh := filepath.Join(home, ".ssh")
	base := roster.Target{ID: "w", Host: "web", Port: 22, User: "root", Priv: ssh + "/salt-ssh.rsa",
		Timeout: 65 * time.Second, Keepalive: true, KeepaliveInterval: 60, KeepaliveCountMax: 3}

	t.Run("ssh_config fills defaults", func(t *testing.T) {
		cfg, err := d.config(&base)
		if err != nil {
			t.Fatal(err)
		}
		got := []any{cfg.Host, cfg.Port, cfg.User, cfg.Priv, cfg.HostKey, cfg.KnownHostsFile, cfg.ServerAliveInterval}
		want := []any{"10.1.1.1", 2201, "cfguser", []string{ssh + "/salt-ssh.rsa", ssh + "/id_cfg"},
			sshconn.HostKeyAcceptNew, ssh + "/kh_web", 60 * time.Second}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if len(cfg.Jumps) != 1 || cfg.Jumps[0].Host != "10.1.1.254" || cfg.Jumps[0].User != "jump" ||
			cfg.Jumps[0].Port != 22 || cfg.Jumps[0].Password != "" ||
			!cmp.Equal(cfg.Jumps[0].Priv, []string{ssh + "/salt-ssh.rsa", ssh + "/id_cfg", ssh + "/id_bastion"}) {
			t.Errorf("jump = %+v", cfg.Jumps)
		}
	})
	t.Run("roster and ssh_options win", func(t *testing.T) {
		tg := base
		tg.User, tg.Port, tg.Passwd = "deploy", 2022, roster.Secret("pw")
		tg.SSHOptions = []string{"IdentityFile=~/.ssh/id_opt", "ProxyJump=none", "StrictHostKeyChecking yes",
			"ConnectTimeout=3", "ServerAliveInterval=0", "Ciphers=aes128-ctr", "Ciphers=x"}
		t.Setenv("HOME", home)
		cfg, err := d.config(&tg)
		if err != nil {
			t.Fatal(err)
		}
		got := []any{cfg.Host, cfg.Port, cfg.User, cfg.Priv, cfg.HostKey, cfg.Timeout, cfg.ServerAliveInterval, len(cfg.Jumps), cfg.Password}
		want := []any{"10.1.1.1", 2022, "deploy", []string{ssh + "/salt-ssh.rsa", ssh + "/id_opt", ssh + "/id_cfg"},
			sshconn.HostKeyStrict, 3 * time.Second, time.Duration(0), 0, "pw"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if n := strings.Count(logs.String(), "option=ciphers"); n != 1 {
			t.Errorf("ignored option warned %d times, want once:\n%s", n, logs.String())
		}
	})
	t.Run("CLI host key flag wins", func(t *testing.T) {
		d.modeSet, d.mode = true, sshconn.HostKeyIgnore
		defer func() { d.modeSet, d.mode = false, sshconn.HostKeyStrict }()
		cfg, _ := d.config(&base)
		if cfg.HostKey != sshconn.HostKeyIgnore {
			t.Errorf("HostKey = %v", cfg.HostKey)
		}
	})
	t.Run("agent-forwarding without an agent", func(t *testing.T) {
		tg := base
		tg.Priv = roster.AgentForwarding
		_, err := d.config(&tg)
		var ae *sshconn.AgentError
		if !errors.As(err, &ae) {
			t.Fatalf("err = %v, want *AgentError", err)
		}
	})
}

func TestDialerJumpLoopThroughSSHConfig(t *testing.T) {
	d, _, _ := testDialer(t, `
Host a
  ProxyJump b
Host b
  ProxyJump a
`)
	tg := roster.Target{ID: "t", Host: "t", Port: 22, User: "root", SSHOptions: []string{"ProxyJump=a"}}
	if _, err := d.config(&tg); !errors.Is(err, sshconn.ErrJumpLoop) {
		t.Fatalf("err = %v, want ErrJumpLoop", err)
	}
	tg.SSHOptions = []string{"ProxyJump=u@x:2,y"}
	cfg, err := d.config(&tg)
	if err != nil || len(cfg.Jumps) != 2 || cfg.Jumps[0].User != "u" || cfg.Jumps[0].Port != 2 || cfg.Jumps[1].Host != "y" {
		t.Fatalf("jumps = %+v, %v", cfg.Jumps, err)
	}
}
