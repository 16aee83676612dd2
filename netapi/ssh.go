package netapi

import (
	"context"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// SSHRunner runs the ssh client's salt-ssh job.
type SSHRunner interface {
	Run(ctx context.Context, chunk *ordered.Map, creds master.Creds) (*ordered.Map, error)
}

// sshClient is NetapiClient.ssh.
func (s *Server) sshClient(ctx context.Context, chunk *ordered.Map, creds master.Creds) (any, error) {
	if s.ssh == nil {
		return nil, httpError(400, "The ssh client is not available in this salt-api")
	}
	return s.ssh.Run(ctx, chunk, creds)
}
