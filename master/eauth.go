package master

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/eauth"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/target"
)

// Creds is how a caller proves who it is: a Salt eauth token, or eauth
// credentials. The zero Creds is the local root user (the socket is 0600
// root), who needs no eauth, as Salt's publish with user root.
type Creds struct{ Token, Eauth, Username, Password string }

// String shows the credentials with the password and the token
// redacted, so a Creds printed or logged by mistake leaks neither.
func (c Creds) String() string {
	return fmt.Sprintf("Creds{Eauth: %q, Username: %q, Password: %s, Token: %s}", c.Eauth, c.Username, redacted(c.Password), redacted(c.Token))
}

// GoString is String, for %#v.
func (c Creds) GoString() string { return c.String() }

// LogValue logs the eauth and user, never the secrets.
func (c Creds) LogValue() slog.Value {
	return slog.GroupValue(slog.String("eauth", c.Eauth), slog.String("user", c.Username), slog.Bool("token", c.Token != ""))
}

func redacted(s string) string {
	if s == "" {
		return `""`
	}
	return "<redacted>"
}

// sensitiveKeys are what ClearFuncs and RunnerClient._reformat_low take
// out of a call's load before it runs: credentials never reach a
// function's arguments, its events or the job cache.
var sensitiveKeys = []string{"username", "password", "eauth", "token", "key", "client"}

// withoutCreds is kw without sensitiveKeys (a copy when it had any).
func withoutCreds(kw *ordered.Map) *ordered.Map {
	for _, k := range sensitiveKeys {
		if kw.Has(k) {
			kw = kw.Copy()
			for _, k := range sensitiveKeys {
				kw.Delete(k)
			}
			return kw
		}
	}
	return kw
}

// authType is ClearFuncs._prep_auth_info: a token wins over eauth
// credentials, and neither is the local user.
func (c Creds) authType() string {
	switch {
	case c.Token != "":
		return "token"
	case c.Eauth != "":
		return "eauth"
	}
	return "user"
}

// The kinds of AuthError.
const (
	// AuthKindAuthentication is bad or missing credentials, or a bad or
	// expired token (HTTP 401).
	AuthKindAuthentication = "authentication"
	// AuthKindAuthorization is an authenticated caller the ACL does not
	// permit (Salt answers 401 too).
	AuthKindAuthorization = "authorization"
)

// AuthError is the master refusing a request. Kind is AuthKindAuthentication
// or AuthKindAuthorization; Message is Salt's exact text.
type AuthError struct{ Kind, Message string }

func (e *AuthError) Error() string { return e.Message }

// Salt's refusals (salt/master.py ClearFuncs, salt/auth/__init__.py).
const (
	msgPublishAuthn = "Authentication error occurred."
	msgPublishAuthz = "Authorization error occurred."
	msgTokenAuthn   = `Authentication failure of type "token" occurred.`
	msgEauthAuthn   = `Authentication failure of type "eauth" occurred.`
)

// eauthState is the master's external authentication: LoadAuth over the
// backends and the token store, and the publisher ACLs.
type eauthState struct {
	auth         *eauth.Auth
	log          *slog.Logger
	blacklist    *ordered.Map // publisher_acl_blacklist: users, modules
	publisherACL *ordered.Map // publisher_acl, for sudo_ users when sudo_acl
	sudoACL      bool
	lastClean    time.Time // of the token store, by the maintenance loop
}

// maintain is the eauth part of the maintenance loop: once a minute
// (Salt's loop_interval) expired tokens are removed, as
// masterapi.clean_expired_tokens does.
func (s *eauthState) maintain(now time.Time) {
	if now.Sub(s.lastClean) < time.Minute {
		return
	}
	s.lastClean = now
	if n, err := s.auth.Tokens().Clean(now); err != nil {
		s.log.Warn("clean expired tokens", logattr.Err, err)
	} else if n > 0 {
		s.log.Info("removed expired tokens", "removed", n)
	}
}

// newEauthState reads the eauth options from the master config.
func newEauthState(o Options, log *slog.Logger) (*eauthState, error) {
	raw := o.Raw
	ea, warns, err := eauth.ParseExternalAuth(raw.Value("external_auth"))
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		log.Warn(w)
	}
	s := eauth.Settings{ExternalAuth: ea, Backends: map[string]eauth.Backend{}, TokenExpire: 43200}
	if v, ok := ordered.Number(raw.Value("token_expire")); ok {
		s.TokenExpire = v
	}
	s.UserOverride = raw.Value("token_expire_user_override")
	s.KeepACLInToken = modules.Truthy(raw.Value("keep_acl_in_token"))
	s.PermissiveACL = modules.Truthy(raw.Value("permissive_acl"))
	if t, _ := raw.Value("eauth_tokens").(string); t != "" && t != "localfs" {
		return nil, fmt.Errorf("eauth_tokens %q: Brine stores tokens only in localfs", t)
	}
	if m, _ := raw.Value("eauth_acl_module").(string); m != "" {
		log.Warn("eauth_acl_module is not supported: ACLs come from external_auth", "eauth_acl_module", m)
	}
	if modules.Truthy(raw.Value("auth.enable_expanded_auth_matching")) {
		log.Warn("auth.enable_expanded_auth_matching is not supported: ACLs are checked as Salt's default auth_check does")
	}
	for _, name := range ea.Names() {
		s.Backends[name] = backendFor(name, ea.Backend(name), o, raw)
		if u, ok := s.Backends[name].(eauth.Unavailable); ok {
			log.Warn("eauth backend unavailable: its users cannot authenticate", logattr.Eauth, name, "reason", u.Why)
		}
	}
	tokenDir := filepath.Join(o.CacheDir, "tokens")
	st := &eauthState{auth: eauth.New(s, &eauth.Tokens{Dir: tokenDir}, log), log: log}
	st.blacklist, _ = raw.Value("publisher_acl_blacklist").(*ordered.Map)
	st.publisherACL, _ = raw.Value("publisher_acl").(*ordered.Map)
	st.sudoACL = modules.Truthy(raw.Value("sudo_acl"))
	return st, nil
}

// backendFor is the backend serving an external_auth section.
func backendFor(name string, b *eauth.BackendConfig, o Options, raw *ordered.Map) eauth.Backend {
	switch name {
	case "auto":
		return eauth.Auto{}
	case "sharedsecret":
		v, set := raw.Get("sharedsecret")
		secret, _ := v.(string)
		return eauth.SharedSecret{Secret: secret, Set: set && v != nil}
	case "file":
		f, err := eauth.NewFile(b.Options)
		if err != nil {
			return eauth.Unavailable{Name: name, Why: err.Error()}
		}
		return f
	case "pam":
		if o.PAM == nil {
			return eauth.Unavailable{Name: name, Why: "this salt-master was built without the pam backend"}
		}
		return o.PAM
	}
	return eauth.Unavailable{Name: name, Why: "Brine has no " + name + " eauth backend"}
}

// identify authenticates creds for runner, wheel and publish: the caller's
// identity, or nil with the auth type's Salt error when it fails.
func (s *eauthState) identify(ctx context.Context, c Creds) (*eauth.Identity, error) {
	switch c.authType() {
	case "token":
		if id := s.auth.AuthenticateToken(c.Token); id != nil {
			return id, nil
		}
		return nil, &AuthError{Kind: AuthKindAuthentication, Message: msgTokenAuthn}
	case "eauth":
		if id := s.auth.AuthenticateEauth(ctx, c.Eauth, c.Username, c.Password); id != nil {
			return id, nil
		}
		return nil, &AuthError{Kind: AuthKindAuthentication,
			Message: fmt.Sprintf(`Authentication failure of type "eauth" occurred for user %s.`, orUnknown(c.Username))}
	}
	return nil, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "UNKNOWN"
	}
	return s
}

// blacklisted is PublisherACL.user_is_blacklisted or cmd_is_blacklisted.
func (s *eauthState) blacklisted(user, fun string) bool {
	if s.blacklist == nil {
		return false
	}
	return matchesAny(user, s.blacklist.Value("users")) || matchesAny(fun, s.blacklist.Value("modules"))
}

// matchesAny is a check_whitelist_blacklist blacklist hit: a string or a
// list of expr_match patterns.
func matchesAny(v string, pats any) bool {
	var l []any
	switch p := pats.(type) {
	case string:
		l = []any{p}
	case []any:
		l = p
	}
	for _, x := range l {
		if s, ok := x.(string); ok && pki.ExprMatch(v, s) {
			return true
		}
	}
	return false
}

// authorizePublish is ClearFuncs.publish's checks: the blacklist, then
// authentication and the ACL for tokens, eauth and sudo users under
// sudo_acl. On success r.User is the name the job runs as. A refusal
// fires salt/job/<jid>/error when the request named a jid.
func (m *Master) authorizePublish(ctx context.Context, r *PublishRequest, minions []string) error {
	s := m.eauth
	if r.User == "" {
		r.User = "root"
	}
	if s.blacklisted(r.User, r.Fun) {
		s.log.Error(r.User+" does not have permissions to run "+r.Fun+". Please contact your local administrator if you believe this is in error.", logattr.User, r.User, logattr.Fun, r.Fun)
		return m.publishRefused(r, &AuthError{Kind: AuthKindAuthorization, Message: msgPublishAuthz})
	}
	kind := r.Auth.authType()
	var authList []any
	switch kind {
	case "user":
		sudo, isSudo := strings.CutPrefix(r.User, "sudo_")
		if !isSudo || !s.sudoACL || s.publisherACL == nil || s.publisherACL.Len() == 0 {
			return nil
		}
		authList = publisherACLFor(s.publisherACL, sudo)
		if len(authList) == 0 {
			return m.publishRefused(r, &AuthError{Kind: AuthKindAuthentication, Message: msgPublishAuthn})
		}
	default:
		id, err := s.identify(ctx, r.Auth)
		if err != nil {
			s.log.Warn(fmt.Sprintf(`Authentication failure of type "%s" occurred.`, kind))
			return m.publishRefused(r, &AuthError{Kind: AuthKindAuthentication, Message: msgPublishAuthn})
		}
		authList = id.AuthList
		defer func() { r.User = id.Name }()
	}
	p := eauth.Publish{Funs: []string{r.Fun}, Args: [][]any{r.Arg}, Tgt: r.Tgt, TgtType: r.TgtType, Minions: minions}
	if !eauth.AuthCheck(authList, p, []string{"saltutil.find_job"}, m.expandTarget) {
		s.log.Warn(fmt.Sprintf(`Authentication failure of type "%s" occurred.`, kind))
		return m.publishRefused(r, &AuthError{Kind: AuthKindAuthorization, Message: msgPublishAuthz})
	}
	return nil
}

// publisherACLFor is salt.utils.master.get_values_of_matching_keys.
func publisherACLFor(acl *ordered.Map, user string) []any {
	var out []any
	acl.Range(func(k, v any) bool {
		if pat, ok := k.(string); ok && pki.ExprMatch(user, pat) {
			l, _ := v.([]any)
			out = append(out, l...)
		}
		return true
	})
	return out
}

// publishRefused fires salt/job/<jid>/error for a refused publish that
// named its jid (without the credentials Salt's event would carry) and
// returns err.
func (m *Master) publishRefused(r *PublishRequest, err *AuthError) error {
	if r.JID != "" {
		name := "AuthorizationError"
		if err.Kind == AuthKindAuthentication {
			name = "AuthenticationError"
		}
		m.bus.Fire("salt/job/"+r.JID+"/error", ordered.FromPairs("tgt", r.Tgt, "tgt_type", r.TgtType, "fun", r.Fun,
			"arg", orList(r.Arg), "jid", r.JID, "user", r.User, "error", ordered.FromPairs("name", name, "message", err.Message)))
	}
	return err
}

// expandTarget is the TargetFunc of the ACL checks: the master's own
// CheckMinions, answering no minions for a target it cannot evaluate.
func (m *Master) expandTarget(tgt any, tgtType string) []string {
	kind, err := target.ParseKind(tgtType)
	if err != nil {
		return nil
	}
	ids, err := m.CheckMinions(tgt, kind, "")
	if err != nil {
		return nil
	}
	return ids
}

// authorizeCall is ClearFuncs.runner and .wheel's checks: the caller's
// name, or the error Salt answers. kind is "runner" or "wheel"; low is
// what spec_check reads argument conditions from.
func (m *Master) authorizeCall(ctx context.Context, kind string, req CallRequest, low *ordered.Map) (string, error) {
	authType := req.Auth.authType()
	if authType == "user" {
		return req.user(), nil
	}
	id, err := m.eauth.identify(ctx, req.Auth)
	if err != nil {
		return "", err
	}
	ok, err := eauth.SpecCheck(id.AuthList, req.Fun, low, kind)
	if errors.Is(err, eauth.ErrCheckSyntax) {
		return "", err
	}
	if !ok {
		return "", &AuthError{Kind: AuthKindAuthorization,
			Message: fmt.Sprintf(`Authentication failure of type "%s" occurred for user %s.`, authType, id.Name)}
	}
	return id.Name, nil
}
