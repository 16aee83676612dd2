package main

import (
	"context"
	"log/slog"
	"os"

	"golang.org/x/term"

	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/sshexec/sshconn"
)

// dialer turns roster targets into SSH connections.
type dialer struct {
	mode       sshconn.HostKeyMode
	knownHosts string
	log        *slog.Logger
}

func (d *dialer) dial(ctx context.Context, t *roster.Target) (sshexec.Conn, error) {
	cfg := sshconn.Config{
		Host:           t.Host,
		Port:           t.Port,
		User:           t.User,
		Password:       t.Passwd.Reveal(),
		PrivPassphrase: []byte(t.PrivPasswd.Reveal()),
		IdentitiesOnly: t.IdentitiesOnly,
		HostKey:        d.mode,
		KnownHostsFile: d.knownHosts,
		Timeout:        t.Timeout,
		Logger:         d.log,
	}
	if t.Priv != "" && t.Priv != roster.AgentForwarding {
		cfg.Priv = []string{t.Priv}
	}
	return sshconn.Dial(ctx, cfg)
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
