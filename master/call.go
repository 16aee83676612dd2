package master

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// CallRequest is a runner or wheel call.
type CallRequest struct {
	Fun   string
	Arg   []any // positional (runner only; wheel takes kwargs)
	Kwarg *ordered.Map
	Auth  Creds
	// Async returns {"tag", "jid"} at once; the call runs in the master
	// and fires its events.
	Async bool
	// User is who a call without credentials runs as (salt-run's
	// LocalUser); empty is UNKNOWN, as Salt's low() says.
	User string
}

func (r CallRequest) user() string {
	if r.User == "" {
		return "UNKNOWN"
	}
	return r.User
}

// Call is ClearFuncs.runner or .wheel: the caller is authenticated and
// authorized (spec_check) before anything runs. A runner returns its
// return (Async: {"tag": "salt/run/<jid>", "jid"}); a wheel call returns
// {"tag": "salt/wheel/<jid>", "data": {...}} (Async: {"tag", "jid"}). ctx
// bounds a synchronous call; an asynchronous one runs until the master
// stops (life).
func (m *Master) Call(ctx, life context.Context, kind string, req CallRequest) (any, error) {
	if req.Kwarg == nil {
		req.Kwarg = ordered.New()
	}
	req.Kwarg = withoutCreds(req.Kwarg)
	switch kind {
	case "runner":
		return m.callRunner(ctx, life, req)
	case "wheel":
		return m.callWheel(ctx, life, req)
	}
	return nil, fmt.Errorf("call: unknown client kind %q", kind)
}

func (m *Master) callRunner(ctx, life context.Context, req CallRequest) (any, error) {
	// RunnerClient._reformat_low hands the master {"arg", "kwarg"} as
	// the call's kwarg, which spec_check reads conditions from.
	low := ordered.FromPairs("arg", orList(req.Arg), "kwarg", req.Kwarg)
	user, err := m.authorizeCall(ctx, "runner", req, low)
	if err != nil {
		return nil, err
	}
	jid := protocol.NewJID(time.Now())
	if !req.Async {
		return m.runRunner(ctx, jid, req.Fun, req.Arg, req.Kwarg, user, true)
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		_, _ = m.runRunner(life, jid, req.Fun, req.Arg, req.Kwarg, user, false)
	}()
	return ordered.FromPairs("tag", "salt/run/"+jid, "jid", jid), nil
}

func (m *Master) callWheel(ctx, life context.Context, req CallRequest) (any, error) {
	// ClearFuncs.wheel passes clear_load's "kwarg" key, which a wheel
	// load has only when the caller nested one.
	low, _ := req.Kwarg.Value("kwarg").(*ordered.Map)
	user, err := m.authorizeCall(ctx, "wheel", req, low)
	if err != nil {
		return nil, err
	}
	if !m.HasWheel(req.Fun) {
		return nil, &NoRunnerError{Fun: req.Fun}
	}
	jid := protocol.NewJID(time.Now())
	if !req.Async {
		return m.runWheel(ctx, jid, req.Fun, req.Kwarg, user), nil
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.runWheel(life, jid, req.Fun, req.Kwarg, user)
	}()
	return ordered.FromPairs("tag", "salt/wheel/"+jid, "jid", jid), nil
}

// MkToken is ClearFuncs.mk_token: authenticate the credentials and store
// a token (tokenExpire seconds when positive and the user may choose,
// see token_expire_user_override). The answer is the token's data as
// Salt returns it, with "perms" added (what salt-api's /login reports).
func (m *Master) MkToken(ctx context.Context, c Creds, tokenExpire float64) (*ordered.Map, error) {
	var exp *float64
	if tokenExpire > 0 {
		exp = &tokenExpire
	}
	td, err := m.eauth.auth.MkToken(ctx, c.Eauth, c.Username, c.Password, exp)
	if err != nil {
		return nil, fmt.Errorf("make token: %w", err)
	}
	if td == nil {
		return nil, &AuthError{Kind: AuthKindAuthentication, Message: msgEauthAuthn}
	}
	out := td.Copy()
	out.Set("perms", m.eauth.auth.Perms(td))
	return out, nil
}

// GetToken is ClearFuncs.get_token: a valid token's data (with "perms"),
// else an authentication AuthError.
func (m *Master) GetToken(token string) (*ordered.Map, error) {
	td, err := m.eauth.auth.GetToken(token)
	if err != nil {
		return nil, &AuthError{Kind: AuthKindAuthentication, Message: msgTokenAuthn}
	}
	out := td.Copy()
	out.Set("perms", m.eauth.auth.Perms(td))
	return out, nil
}

// DelToken removes a token (salt-api's /logout, LoadAuth.rm_token).
func (m *Master) DelToken(token string) error {
	return m.eauth.auth.Tokens().Remove(token)
}

// asAuthError turns a socket refusal back into the error it was.
func asAuthError(resp *ordered.Map) error {
	msg, _ := resp.Value("error").(string)
	kind, _ := resp.Value("error_type").(string)
	if kind == AuthKindAuthentication || kind == AuthKindAuthorization {
		return &AuthError{Kind: kind, Message: msg}
	}
	return errors.New(msg)
}
