package cron

import (
	"context"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// cronID is _cron_id: the entry's identifier, else "NO ID SET".
func cronID(cron *ordered.Map) string {
	if id := cron.Value("identifier"); modules.Truthy(id) {
		return str(id)
	}
	return noID
}

// matched is _cron_matched: same identifier, or same command for
// entries without one.
func matched(cron *ordered.Map, cmd string, identifier any) bool {
	cid := cronID(cron)
	if !modules.Truthy(identifier) {
		identifier = noID
	}
	eid := str(identifier)
	same := str(cron.Value("cmd")) == cmd
	if !same && cid == noID && eid == noID {
		return false
	}
	if same && cid == noID {
		cid = eid
	}
	return eid == cid
}

// needsChange is _needs_change.
func needsChange(old, new any) bool {
	if ordered.Equal(old, new) {
		return false
	}
	if new == "random" {
		return old == "*"
	}
	return new != nil
}

var timeFields = []string{"minute", "hour", "daymonth", "month", "dayweek"}

// jobSpec is what set_job and set_special ask for.
type jobSpec struct {
	times      map[string]any // minute…dayweek; nil for a special
	special    any            // @spec; nil for a job
	cmd        string
	commented  any
	comment    any
	identifier any
}

// set is the body shared by set_job and set_special: "present" when an
// entry already matches, "updated" after replacing one, "new" after
// adding one, or crontab's error text.
func (ct *crontab) set(ctx context.Context, usr string, j jobSpec) (string, error) {
	t, err := ct.List(ctx, usr)
	if err != nil {
		return "", err
	}
	for _, cron := range append(append([]*ordered.Map{}, t.Crons...), t.Special...) {
		if !matched(cron, j.cmd, j.identifier) {
			continue
		}
		setID := any(noID)
		if id := cron.Value("identifier"); id != nil {
			setID = id
		}
		tests := [][2]any{{cron.Value("comment"), j.comment}, {cron.Value("commented"), j.commented},
			{j.identifier, setID}, {cron.Value("spec"), j.special}}
		for _, f := range timeFields {
			tests = append(tests, [2]any{cron.Value(f), j.times[f]})
		}
		cid := cronID(cron)
		tests = append(tests, [2]any{cron.Value("cmd"), j.cmd})
		changed := false
		for _, tt := range tests {
			changed = changed || needsChange(tt[0], tt[1])
		}
		if !changed {
			return "present", nil
		}
		if err := ct.remove(ctx, usr, cron, cid); err != nil {
			return "", err
		}
		next := ct.merge(cron, j, cid)
		ret, err := ct.set(ctx, usr, next)
		if ret == "new" {
			ret = "updated"
		}
		return ret, err
	}
	entry := ordered.FromPairs("cmd", j.cmd, "identifier", j.identifier, "comment", j.comment, "commented", j.commented == true)
	if j.times == nil {
		entry = ordered.FromPairs("spec", j.special, "cmd", j.cmd, "identifier", j.identifier, "comment", j.comment,
			"commented", j.commented == true)
		t.Special = append(t.Special, entry)
	} else {
		for f, v := range dateTime(j.times) {
			entry.Set(f, v)
		}
		t.Crons = append(t.Crons, entry)
	}
	if fail, err := ct.write(ctx, usr, t); err != nil || fail != "" {
		return fail, err
	}
	return "new", nil
}

func (ct *crontab) remove(ctx context.Context, usr string, cron *ordered.Map, cid string) error {
	var err error
	if cron.Has("spec") {
		_, err = ct.rmSpecial(ctx, usr, str(cron.Value("cmd")), nil, cid)
	} else {
		_, err = ct.rmJob(ctx, usr, str(cron.Value("cmd")), nil, cid)
	}
	return err
}

// merge keeps the old values of the fields the caller does not change,
// as set_job does before re-adding an entry.
func (ct *crontab) merge(cron *ordered.Map, j jobSpec, cid string) jobSpec {
	keep := func(old, new any) any {
		if needsChange(old, new) {
			return new
		}
		return old
	}
	out := j
	if j.times != nil {
		out.times = map[string]any{}
		for _, f := range timeFields {
			out.times[f] = keep(cron.Value(f), j.times[f])
		}
	} else {
		out.special = keep(cron.Value("spec"), j.special)
	}
	out.commented = keep(cron.Value("commented"), j.commented)
	out.comment = keep(cron.Value("comment"), j.comment)
	var id any = cid
	if !needsChange(cron.Value("cmd"), j.cmd) {
		out.cmd = str(cron.Value("cmd"))
		if cid == noID {
			if modules.Truthy(j.identifier) {
				id = str(j.identifier)
			}
			if id == noID && cron.Value("identifier") == nil {
				id = nil
			}
		}
	}
	out.identifier = j.identifier
	if !modules.Truthy(id) || !needsChange(id, j.identifier) {
		out.identifier = id
	}
	return out
}

var dateRanges = map[string][2]int{"minute": {0, 59}, "hour": {0, 23}, "month": {1, 12}, "dayweek": {0, 6}}

// dateTime is _get_cron_date_time: "random" picks a value in range and
// "a:b" a value between a and b.
func dateTime(times map[string]any) map[string]any {
	ret := map[string]any{}
	for _, f := range []string{"minute", "hour", "month", "dayweek"} {
		v := strings.ToLower(str(times[f]))
		parts := strings.Split(v, ":")
		switch {
		case v == "random":
			r := dateRanges[f]
			ret[f] = strconv.Itoa(r[0] + rand.IntN(r[1]-r[0]+1))
		case len(parts) == 2:
			sort.Strings(parts)
			a, err1 := strconv.Atoi(parts[0])
			b, err2 := strconv.Atoi(parts[1])
			if err1 != nil || err2 != nil || b < a {
				ret[f] = v
				continue
			}
			ret[f] = strconv.Itoa(a + rand.IntN(b-a+1))
		default:
			ret[f] = v
		}
	}
	maxDay := 28
	switch ret["month"] {
	case "1", "3", "5", "7", "8", "10", "12":
		maxDay = 31
	case "4", "6", "9", "11":
		maxDay = 30
	}
	ret["daymonth"] = strings.ToLower(str(times["daymonth"]))
	if ret["daymonth"] == "random" {
		ret["daymonth"] = strconv.Itoa(1 + rand.IntN(maxDay))
	}
	return ret
}

// dateTimeMatch is _date_time_match.
func dateTimeMatch(cron *ordered.Map, times map[string]any) bool {
	for _, f := range timeFields {
		v, ok := times[f]
		if !ok || v == nil {
			continue
		}
		s := str(v)
		if str(cron.Value(f)) != s && !(strings.ToLower(s) == "random" && cron.Value(f) != "*") {
			return false
		}
	}
	return true
}

func (ct *crontab) rmJob(ctx context.Context, usr, cmd string, times map[string]any, identifier any) (string, error) {
	t, err := ct.List(ctx, usr)
	if err != nil {
		return "", err
	}
	for i, c := range t.Crons {
		if !matched(c, cmd, identifier) || !dateTimeMatch(c, times) {
			continue
		}
		t.Crons = append(t.Crons[:i], t.Crons[i+1:]...)
		if fail, err := ct.write(ctx, usr, t); err != nil || fail != "" {
			return fail, err
		}
		return "removed", nil
	}
	return "absent", nil
}

func (ct *crontab) rmSpecial(ctx context.Context, usr, cmd string, special, identifier any) (string, error) {
	t, err := ct.List(ctx, usr)
	if err != nil {
		return "", err
	}
	ret := "absent"
	for i, c := range t.Special {
		if matched(c, cmd, identifier) && (special == nil || c.Value("spec") == special) {
			t.Special = append(t.Special[:i], t.Special[i+1:]...)
			ret = "removed"
			break
		}
	}
	if fail, err := ct.write(ctx, usr, t); err != nil || fail != "" {
		return fail, err
	}
	return ret, nil
}

func (ct *crontab) setEnv(ctx context.Context, usr, name string, value any) (string, error) {
	t, err := ct.List(ctx, usr)
	if err != nil {
		return "", err
	}
	for _, e := range t.Env {
		if e.Value("name") != name {
			continue
		}
		if ordered.Equal(e.Value("value"), value) {
			return "present", nil
		}
		if _, err := ct.rmEnv(ctx, usr, name); err != nil {
			return "", err
		}
		ret, err := ct.setEnv(ctx, usr, name, value)
		if ret == "new" {
			ret = "updated"
		}
		return ret, err
	}
	t.Env = append(t.Env, ordered.FromPairs("name", name, "value", value))
	if fail, err := ct.write(ctx, usr, t); err != nil || fail != "" {
		return fail, err
	}
	return "new", nil
}

func (ct *crontab) rmEnv(ctx context.Context, usr, name string) (string, error) {
	t, err := ct.List(ctx, usr)
	if err != nil {
		return "", err
	}
	ret, idx := "absent", -1
	for i, e := range t.Env {
		if e.Value("name") == name {
			idx = i
		}
	}
	if idx >= 0 {
		t.Env = append(t.Env[:idx], t.Env[idx+1:]...)
		ret = "removed"
	}
	if fail, err := ct.write(ctx, usr, t); err != nil || fail != "" {
		return fail, err
	}
	return ret, nil
}
