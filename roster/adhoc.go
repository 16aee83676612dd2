package roster

import (
	"context"
	"strings"
)

// AdHoc wraps a Roster with salt-ssh's command-line fallback
// (salt/client/ssh/__init__.py SSH._expand_target and _update_targets):
//
//   - `user@host` is matched as `host`; the user part is used only if the
//     host is not in the roster.
//   - a glob target that matches no roster entry, has no glob characters
//     and resolves (is_reachable_host) becomes a target of its own with
//     ID and host set to it, the user from `user@` or ssh_user, the
//     password ssh_passwd, and the other Options. roster_defaults are not
//     applied to it, as in Salt.
type AdHoc struct {
	Roster Roster
	Config Config
}

// Targets implements Roster.
func (a *AdHoc) Targets(ctx context.Context, tgt, tgtType string) ([]Target, error) {
	user, host, hasUser := splitUserHost(tgt)
	glob := tgtType == "" || tgtType == TgtGlob
	match := tgt
	if glob && hasUser {
		match = host
	}
	ts, err := a.Roster.Targets(ctx, match, tgtType)
	if err != nil || len(ts) > 0 || !glob {
		return ts, err
	}
	if host == "" || strings.ContainsAny(host, "*?[") || !a.Config.reachable(ctx, host) {
		return nil, nil
	}
	if !hasUser {
		user = a.Config.Options.User
	}
	o := a.Config.Options
	o.User = user
	t, _ := buildTarget(host, []field{{key: "host", val: host}}, o)
	return []Target{t}, nil
}

// splitUserHost splits "user@host" at the first "@" (SSH.parse_tgt).
func splitUserHost(tgt string) (user, host string, ok bool) {
	if u, h, found := strings.Cut(tgt, "@"); found {
		return u, h, true
	}
	return "", tgt, false
}
