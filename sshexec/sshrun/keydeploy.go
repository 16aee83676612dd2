package sshrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/sshexec/sshconn"
)

// dialDeploying dials cfg. With --key-deploy and a password it first tries
// the keys alone; when they are refused it logs in once with the password,
// appends the salt-ssh public key (<priv>.pub) to the user's
// authorized_keys, and dials again with the keys alone, so that the run
// and every later one go without the password (Salt's SSH.key_deploy and
// _key_deploy_run in salt/client/ssh/__init__.py, which use ssh-copy-id).
func (d *dialer) dialDeploying(ctx context.Context, cfg sshconn.Config) (*sshconn.Conn, error) {
	if !d.keyDeploy || cfg.Password == "" || len(cfg.Priv) == 0 {
		return sshconn.Dial(ctx, cfg)
	}
	keyOnly := cfg
	keyOnly.Password = ""
	conn, err := sshconn.Dial(ctx, keyOnly)
	var je *sshconn.JumpError
	if err == nil || !errors.Is(err, sshconn.ErrAuthFailed) || errors.As(err, &je) {
		return conn, err
	}
	if err := d.deployKey(ctx, cfg); err != nil {
		return nil, err
	}
	return sshconn.Dial(ctx, keyOnly)
}

// deployKey logs in with the password only and installs cfg.Priv[0]'s
// public half.
func (d *dialer) deployKey(ctx context.Context, cfg sshconn.Config) error {
	pubPath := cfg.Priv[0] + ".pub"
	pub, err := os.ReadFile(pubPath)
	if err != nil {
		return fmt.Errorf("key deploy: read public key: %w", err)
	}
	pwOnly := cfg
	pwOnly.Priv, pwOnly.Signers, pwOnly.CertificateFiles, pwOnly.AgentSocket = nil, nil, nil, ""
	conn, err := sshconn.Dial(ctx, pwOnly)
	if err != nil {
		return fmt.Errorf("key deploy: %w", err)
	}
	defer conn.Close()
	if err := sshconn.DeployKey(ctx, conn, strings.TrimSpace(string(pub))); err != nil {
		return fmt.Errorf("key deploy: %w", err)
	}
	d.log.Info("deployed the salt-ssh key", logattr.Host, cfg.Host, "user", cfg.User, "key", pubPath)
	return nil
}
