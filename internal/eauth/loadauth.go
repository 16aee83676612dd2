package eauth

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
)

// Settings are the master options LoadAuth reads.
type Settings struct {
	ExternalAuth *ExternalAuth
	// Backends are the eauth backends by name; a name configured in
	// external_auth without a backend here cannot authenticate.
	Backends map[string]Backend
	// TokenExpire is token_expire in seconds (default 43200).
	TokenExpire float64
	// UserOverride is token_expire_user_override: true, or a mapping of
	// eauth name to the users who may choose their token's expiry.
	UserOverride any
	// KeepACLInToken is keep_acl_in_token: the ACL computed when the
	// token is made is stored in it and used instead of external_auth.
	KeepACLInToken bool
	// PermissiveACL is permissive_acl: "*" applies to users who have
	// their own entry too.
	PermissiveACL bool
}

// Auth is LoadAuth: authentication against the backends, tokens, and the
// ACL of an authenticated user.
type Auth struct {
	s      Settings
	tokens *Tokens
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	maxFail time.Duration // LoadAuth.max_fail, the slowest failure so far
}

// New returns the authenticator over a token store.
func New(s Settings, tokens *Tokens, log *slog.Logger) *Auth {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if s.TokenExpire == 0 {
		s.TokenExpire = 43200
	}
	return &Auth{s: s, tokens: tokens, log: log, now: time.Now, maxFail: time.Second}
}

// Tokens is the token store.
func (a *Auth) Tokens() *Tokens { return a.tokens }

// Enabled reports whether eauth names a section of external_auth.
func (a *Auth) Enabled(eauth string) bool { return a.s.ExternalAuth.Backend(eauth) != nil }

// Authenticate is LoadAuth.authenticate_eauth with time_auth: the
// credentials are checked by the named backend, which must be enabled in
// external_auth. A failure is padded to about the slowest failure seen
// so far (at least a second, as Salt's max_fail starts), so its timing
// does not tell a wrong password from an unknown user.
func (a *Auth) Authenticate(ctx context.Context, eauth, username, password string) bool {
	if !a.Enabled(eauth) {
		a.log.Warn("The eauth system is not enabled", logattr.Eauth, eauth)
		a.log.Warn(`Authentication failure of type "eauth" occurred.`)
		return false
	}
	start := a.now()
	ok := a.call(ctx, eauth, username, password)
	if ok {
		return true
	}
	a.padFailure(ctx, start)
	a.log.Warn(`Authentication failure of type "eauth" occurred.`, logattr.Eauth, eauth, logattr.User, username)
	return false
}

func (a *Auth) call(ctx context.Context, eauth, username, password string) bool {
	b, ok := a.s.Backends[eauth]
	if !ok {
		a.log.Warn("eauth backend not available in Brine", logattr.Eauth, eauth)
		return false
	}
	ok, err := b.Authenticate(ctx, username, password)
	if err != nil {
		// Salt logs "Authentication module threw" at debug; the
		// reason (a missing file, no cgo) is worth the operator's eye.
		a.log.Warn("eauth backend failed", logattr.Eauth, eauth, logattr.Err, err)
		return false
	}
	return ok
}

// padFailure is the waiting half of time_auth.
func (a *Auth) padFailure(ctx context.Context, start time.Time) {
	took := a.now().Sub(start)
	a.mu.Lock()
	if took > a.maxFail {
		a.maxFail = took
	}
	maxFail := a.maxFail
	a.mu.Unlock()
	dev := maxFail / 4
	wait := maxFail - dev + time.Duration(rand.Int64N(int64(2*dev)+1))
	t := time.NewTimer(time.Until(start.Add(wait)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Groups is LoadAuth.get_groups: the user's groups when the backend
// knows them (pam), else none.
func (a *Auth) Groups(ctx context.Context, eauth, username string) []string {
	g, ok := a.s.Backends[eauth].(Grouper)
	if !ok {
		return nil
	}
	groups, err := g.Groups(ctx, username)
	if err != nil {
		a.log.Warn("eauth groups", logattr.Eauth, eauth, logattr.User, username, logattr.Err, err)
		return nil
	}
	return groups
}

// allowCustomExpire is LoadAuth._allow_custom_expire.
func (a *Auth) allowCustomExpire(eauth, username string) bool {
	switch o := a.s.UserOverride.(type) {
	case bool:
		return o
	case *ordered.Map:
		users, _ := o.Value(eauth).([]any)
		return slices.Contains(users, any(username))
	}
	return false
}

// MkToken is LoadAuth.mk_token: authenticate, then store a token of
// token_expire seconds (or expire, when the user may choose and asks
// for one; nil asks for the default). It answers nil when the
// credentials fail.
func (a *Auth) MkToken(ctx context.Context, eauth, username, password string, expire *float64) (*ordered.Map, error) {
	if !a.Authenticate(ctx, eauth, username, password) {
		return nil, nil
	}
	life := a.s.TokenExpire
	if expire != nil && a.allowCustomExpire(eauth, username) {
		life = *expire
	}
	now := float64(a.now().UnixNano()) / 1e9
	td := ordered.FromPairs("start", now, "expire", now+life, "name", username, logattr.Eauth, eauth)
	groups := a.Groups(ctx, eauth, username)
	if a.s.KeepACLInToken {
		// Salt stores its eauth module's acl() here, which pam and the
		// others lack, so its tokens then carry None and allow nothing;
		// Brine stores the ACL external_auth gives the user, which is
		// what keep_acl_in_token is documented to do.
		td.Set("auth_list", orEmpty(FillAuthList(a.s.ExternalAuth.Backend(eauth), username, groups, a.s.PermissiveACL)))
	}
	if len(groups) > 0 {
		td.Set("groups", strList(groups))
	}
	if _, err := a.tokens.Make(td); err != nil {
		a.log.Warn(`Authentication failure: can not write token file.`, logattr.Err, err)
		return nil, err
	}
	return td, nil
}

// GetToken is LoadAuth.get_tok: the token's data, or ErrNoToken.
func (a *Auth) GetToken(tok string) (*ordered.Map, error) {
	return a.tokens.Get(tok, a.now())
}

// Identity is an authenticated caller: the name it runs as, its eauth,
// its groups and the ACL it has.
type Identity struct {
	Name     string
	Eauth    string
	Groups   []string
	AuthList []any
}

// AuthenticateToken is LoadAuth.authenticate_token with get_auth_list:
// the identity of a valid token whose eauth is still enabled, else nil.
func (a *Auth) AuthenticateToken(tok string) *Identity {
	td, err := a.GetToken(tok)
	if err != nil {
		a.log.Warn(`Authentication failure of type "token" occurred.`)
		return nil
	}
	eauth, _ := td.Value("eauth").(string)
	if !a.Enabled(eauth) {
		a.log.Warn(`Authentication failure of type "token" occurred.`)
		return nil
	}
	name, _ := td.Value("name").(string)
	id := &Identity{Name: name, Eauth: eauth, Groups: anyStrings(td.Value("groups"))}
	if l, ok := td.Get("auth_list"); ok && a.s.KeepACLInToken {
		id.AuthList, _ = l.([]any)
		return id
	}
	id.AuthList = FillAuthList(a.s.ExternalAuth.Backend(eauth), name, id.Groups, a.s.PermissiveACL)
	return id
}

// AuthenticateEauth is check_authentication for eauth credentials: the
// identity when they authenticate, else nil.
func (a *Auth) AuthenticateEauth(ctx context.Context, eauth, username, password string) *Identity {
	if !a.Authenticate(ctx, eauth, username, password) {
		return nil
	}
	groups := a.Groups(ctx, eauth, username)
	return &Identity{Name: username, Eauth: eauth, Groups: groups,
		AuthList: FillAuthList(a.s.ExternalAuth.Backend(eauth), username, groups, a.s.PermissiveACL)}
}

// Perms is the perms salt-api reports for a token's data.
func (a *Auth) Perms(td *ordered.Map) []any {
	eauth, _ := td.Value("eauth").(string)
	name, _ := td.Value("name").(string)
	return Perms(a.s.ExternalAuth.Backend(eauth), name, anyStrings(td.Value("groups")))
}

func orEmpty(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

func strList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
