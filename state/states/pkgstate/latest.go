package pkgstate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg"
	"github.com/brinesalt/brine/state/states"
)

// Latest is pkg.latest: install or upgrade to the newest available
// version.
func Latest(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Arg("name")
	refresh := checkRefresh(c, c.Arg("refresh"))
	if v, ok := c.Kwargs.Get("sources"); ok && modules.Truthy(v) {
		return states.NewResult(name, states.False, `The "sources" parameter is not supported.`), nil
	}
	var desired []string
	pkgs := c.Arg("pkgs")
	switch l, isList := pkgs.([]any); {
	case modules.Truthy(pkgs):
		ts, ok := pkg.Repack(pkgs, nil)
		if !ok {
			return states.NewResult(name, states.False, `Invalidly formatted "pkgs" parameter. See minion log.`), nil
		}
		for _, t := range ts {
			desired = append(desired, t.Name)
		}
	case isList && len(l) == 0:
		return states.NewResult(name, states.True, "No packages to install provided"), nil
	default:
		desired = []string{c.Str("name")}
	}
	args := make([]any, len(desired))
	for i, d := range desired {
		args[i] = d
	}
	avail, err := salt(ctx, c, "pkg.latest_version", args, "fromrepo", c.Arg("fromrepo"), "refresh", refresh)
	if err != nil {
		return states.NewResult(name, states.False, "An error was encountered while checking the newest available version of package(s): "+err.Error()), nil
	}
	cur, err := salt(ctx, c, "pkg.version", args)
	if err != nil {
		return states.NewResult(name, states.False, err.Error()), nil
	}
	availM, curM := byName(avail, desired), byName(cur, desired)
	targets := ordered.New()
	var problems []string
	for _, p := range desired {
		switch {
		case availM[p] != "":
			targets.Set(p, availM[p])
		case curM[p] == "":
			problems = append(problems, fmt.Sprintf("No information found for '%s'.", p))
		}
	}
	if len(problems) > 0 {
		return states.NewResult(name, states.False, strings.Join(problems, " ")), nil
	}
	if targets.Len() == 0 {
		return upToDate(name, desired), nil
	}
	var upToDate []string
	if modules.Truthy(pkgs) {
		for _, d := range desired {
			if !targets.Has(d) {
				upToDate = append(upToDate, d)
			}
		}
	}
	sort.Strings(upToDate)
	if c.Env.Test {
		comments := []string{"The following packages would be installed/upgraded: " + strings.Join(sortedKeys(targets), ", ")}
		if n := len(upToDate); n > 10 {
			comments = append(comments, fmt.Sprintf("%d packages are already up-to-date", n))
		} else if n > 0 {
			var l []string
			for _, u := range upToDate {
				l = append(l, fmt.Sprintf("%s (%s)", u, curM[u]))
			}
			comments = append(comments, "The following packages are already up-to-date: "+strings.Join(l, ", "))
		}
		return states.NewResult(name, states.None, strings.Join(comments, "\n")), nil
	}
	return latestInstall(ctx, c, targets, upToDate)
}

func latestInstall(ctx context.Context, c *states.Call, targets *ordered.Map, upToDate []string) (*states.Result, error) {
	name := c.Arg("name")
	targeted := append([]any(nil), targets.Keys()...)
	kw := []any{"name", nil, "refresh", false, "fromrepo", c.Arg("fromrepo"), "skip_verify", c.Arg("skip_verify"), "pkgs", targeted}
	c.Kwargs.Range(func(k, v any) bool { kw = append(kw, k, v); return true })
	ret, err := salt(ctx, c, "pkg.install", nil, kw...)
	if err != nil {
		return states.NewResult(name, states.False, "An error was encountered while installing package(s): "+err.Error()), nil
	}
	changes, _ := ret.(*ordered.Map)
	if changes == nil {
		changes = ordered.New()
	}
	keys := sortedKeys(targets)
	if changes.Len() == 0 {
		var comment string
		switch {
		case len(keys) > 10:
			comment = fmt.Sprintf("%d targeted packages failed to update. See debug log for details.", len(keys))
		case len(keys) > 1:
			comment = fmt.Sprintf("The following targeted packages failed to update. See debug log for details: (%s).", strings.Join(keys, ", "))
		default:
			comment = fmt.Sprintf("Package %s failed to update.", keys[0])
		}
		if n := len(upToDate); n > 10 {
			comment += fmt.Sprintf("%d packages were already up-to-date", n)
		} else if n > 0 {
			comment += " The following packages were already up-to-date: " + strings.Join(upToDate, ", ")
		}
		r := states.NewResult(name, states.False, comment)
		r.Changes = changes
		return r, nil
	}
	var failed, ok []string
	for _, k := range keys {
		want := ordered.KeyString(targets.Value(k))
		ch, _ := changes.Value(k).(*ordered.Map)
		newV, hasNew := "", false
		if ch != nil {
			if v, present := ch.Get("new"); present && v != nil {
				newV, hasNew = ordered.KeyString(v), true
			}
		}
		if ch == nil || ch.Len() == 0 || (hasNew && !contains(strings.Split(newV, ","), want) && want != "latest") {
			failed = append(failed, k)
		} else {
			ok = append(ok, k)
		}
	}
	var comments []string
	if len(failed) > 0 {
		comments = append(comments, "The following packages failed to update: "+strings.Join(failed, ", "))
	}
	if len(ok) > 0 {
		comments = append(comments, "The following packages were successfully installed/upgraded: "+strings.Join(ok, ", "))
	}
	if n := len(upToDate); n > 10 {
		comments = append(comments, fmt.Sprintf("%d packages were already up-to-date ", n))
	} else if n > 0 {
		comments = append(comments, "The following packages were already up-to-date: "+strings.Join(upToDate, ", "))
	}
	r := states.NewResult(name, states.TriOf(len(failed) == 0), strings.Join(comments, " "))
	r.Changes = changes
	return r, nil
}

func upToDate(name any, desired []string) *states.Result {
	var comment string
	switch {
	case len(desired) > 10:
		comment = fmt.Sprintf("All %d packages are up-to-date.", len(desired))
	case len(desired) > 1:
		s := append([]string(nil), desired...)
		sort.Strings(s)
		comment = fmt.Sprintf("All packages are up-to-date (%s).", strings.Join(s, ", "))
	default:
		comment = fmt.Sprintf("Package %s is already up-to-date", desired[0])
	}
	return states.NewResult(name, states.True, comment)
}

// byName turns a one-name string return or a {name: value} map into a
// Go map.
func byName(v any, names []string) map[string]string {
	out := map[string]string{}
	if m, ok := v.(*ordered.Map); ok {
		m.Range(func(k, val any) bool {
			if val != nil {
				out[ordered.KeyString(k)] = ordered.KeyString(val)
			}
			return true
		})
		return out
	}
	if len(names) > 0 && v != nil {
		out[names[0]] = ordered.KeyString(v)
	}
	return out
}

func sortedKeys(m *ordered.Map) []string {
	keys := m.StringKeys()
	sort.Strings(keys)
	return keys
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
