package netapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/state/modules"
)

// Clients are NetapiClient's public methods in the order Salt lists them
// (inspect.getmembers sorts by name): what a lowstate's "client" may be
// and what GET / reports.
var Clients = []string{"local", "local_async", "local_batch", "local_subset", "runner", "runner_async", "ssh", "wheel", "wheel_async"}

// many is a client's return that is a sequence of results (local_batch's
// generator), spliced into the response's list as exec_lowstate yields
// from an iterator.
type many []any

// runChunk is NetapiClient.run (salt/netapi/__init__.py): the master
// must be there, the client known and enabled in netapi_enable_clients,
// credentials given, raw shell allowed when asked for; then the client
// runs the chunk.
func (s *Server) runChunk(ctx context.Context, chunk *ordered.Map) (any, error) {
	if _, err := os.Stat(s.sock); err != nil {
		return nil, errMasterDown(err)
	}
	client, _ := chunk.Value("client").(string)
	if !slices.Contains(Clients, client) {
		return nil, httpError(400, fmt.Sprintf("Invalid client specified: '%s'", py.Str(chunk.Value("client"))))
	}
	if !slices.Contains(s.cfg.EnableClients, client) {
		return nil, httpError(400, fmt.Sprintf("Client disabled: '%s'. Add to 'netapi_enable_clients' master config option to enable.", client))
	}
	if !chunk.Has("token") && !chunk.Has("eauth") {
		return nil, httpError(401, "No authentication credentials given")
	}
	if truthy(chunk.Value("raw_shell")) && !s.cfg.AllowRawShell {
		return nil, httpError(401, "Raw shell option not allowed.")
	}
	creds, err := credsOf(chunk)
	if err != nil {
		return nil, err
	}
	switch client {
	case "local", "local_async", "local_batch", "local_subset":
		return s.local(ctx, client, chunk, creds)
	case "runner", "runner_async", "wheel", "wheel_async":
		return s.call(ctx, client, chunk, creds)
	case "ssh":
		return s.sshClient(ctx, chunk, creds)
	}
	return nil, httpError(400, fmt.Sprintf("Invalid client specified: '%s'", client))
}

// credsOf is ClearFuncs._prep_auth_info on the chunk: its token, else
// its eauth credentials. Credentials that would name nobody are refused
// here: the master takes empty credentials as its local root user.
func credsOf(chunk *ordered.Map) (master.Creds, error) {
	if chunk.Has("token") {
		tok, _ := chunk.Value("token").(string)
		if tok == "" {
			return master.Creds{}, httpError(401, "Invalid token")
		}
		return master.Creds{Token: tok}, nil
	}
	c := master.Creds{Eauth: str(chunk.Value("eauth")), Username: str(chunk.Value("username")),
		Password: str(chunk.Value("password"))}
	if c.Eauth == "" {
		return master.Creds{}, httpError(401, "Authentication error occurred.")
	}
	return c, nil
}

// str is a chunk value as a string: nil is "", anything else py.Str.
func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return py.Str(v)
}

// truthy is Python's truth of a lowstate value.
func truthy(v any) bool { return modules.Truthy(v) }

// authErr turns the master's refusal into Salt's 401 with its message;
// other errors pass through.
func authErr(err error) error {
	var ae *master.AuthError
	if errors.As(err, &ae) {
		return httpError(401, ae.Message)
	}
	return err
}
