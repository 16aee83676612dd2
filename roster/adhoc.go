package roster

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
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
//
// With Config.UpdateRoster (--update-roster) an ad-hoc target is also
// appended to the flat roster file, as SSH._update_roster does.
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
	if a.Config.UpdateRoster {
		a.update(t)
	}
	return []Target{t}, nil
}

// update appends t to the roster file; like Salt it only logs failures.
func (a *AdHoc) update(t Target) {
	file := a.Config.RosterFile()
	log := a.Config.logger()
	if err := AppendTarget(file, t, currentUser(), time.Now().UTC()); err != nil {
		log.Error("unable to update roster", logKeyFile, file, logattr.Err, err)
		return
	}
	log.Info("host added to the roster", logKeyFile, file, logKeyTarget, t.ID)
}

// AppendTarget appends t to a flat roster file in the layout
// salt/client/ssh/__init__.py _update_roster writes, password in clear
// text included, as Salt does:
//
//	# Automatically added by "root" at 2026-12-01T01:23:45.123456
//	host:
//	    host: host
//	    user: root
//	    passwd: secret
//
// Salt formats the values into the text unquoted, so a password such as
// "a: b" or "#x" breaks the roster; Brine writes the entry through the
// YAML emitter instead (PyYAML's safe_dump, indent 4), which quotes a
// value only when it would not read back as the same string. No password
// is written as null, which is what Salt's empty "passwd: " reads as.
func AppendTarget(file string, t Target, by string, now time.Time) error {
	entry, err := entryYAML(t)
	if err != nil {
		return fmt.Errorf("append to roster: %w", err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("append to roster: %w", err)
	}
	_, werr := fmt.Fprintf(f, "# Automatically added by %q at %s\n%s", by, pyISOFormat(now), entry)
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return fmt.Errorf("append to roster: %w", werr)
	}
	return nil
}

// entryYAML is t's roster entry {id: {host, user, passwd}} as YAML.
func entryYAML(t Target) (string, error) {
	var passwd any
	if p := t.Passwd.Reveal(); p != "" {
		passwd = p
	}
	m := ordered.FromPairs(t.ID, ordered.FromPairs("host", t.Host, "user", t.User, "passwd", passwd))
	return saltyaml.Dump(m, saltyaml.DumpOptions{Indent: 4})
}

// pyISOFormat is datetime.isoformat(): microseconds only when non-zero.
func pyISOFormat(t time.Time) string {
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}

// currentUser is getpass.getuser(): LOGNAME, USER, LNAME, USERNAME, then
// the password database.
func currentUser() string {
	for _, k := range []string{"LOGNAME", "USER", "LNAME", "USERNAME"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// splitUserHost splits "user@host" at the first "@" (SSH.parse_tgt).
func splitUserHost(tgt string) (user, host string, ok bool) {
	if u, h, found := strings.Cut(tgt, "@"); found {
		return u, h, true
	}
	return "", tgt, false
}
