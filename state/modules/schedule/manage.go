package schedule

import (
	"context"
	"fmt"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/schedule"
	"github.com/brinesalt/brine/state/modules"
)

var timeKeys = []string{"seconds", "minutes", "hours", "days"}

// conflict is the time-element check add, modify and
// build_schedule_item share; "" when the keywords fit.
func conflict(kw *ordered.Map, prefix string) string {
	for _, k := range timeKeys {
		if kw.Has(k) && (kw.Has("when") || kw.Has("cron")) {
			return prefix + `Unable to use "seconds", "minutes", "hours", or "days" with "when" or "cron" options.`
		}
	}
	if kw.Has("when") && kw.Has("cron") {
		return `Unable to use "when" and "cron" options together.  Ignoring.`
	}
	return ""
}

// buildSchedule is build_schedule_item: the entry in Salt's key order,
// or a failed {"comment", "result"}.
func buildSchedule(name string, kw *ordered.Map) (*ordered.Map, *ordered.Map) {
	if name == "" {
		return nil, result("Job name is required.", false, false)
	}
	if msg := conflict(kw, ""); msg != "" {
		return nil, result(msg, false, false)
	}
	item := ordered.FromPairs("function", kw.Value("function"))
	for _, k := range append(append([]string{}, timeKeys...), "return_job", "metadata") {
		if v, ok := kw.Get(k); ok {
			item.Set(k, v)
		}
	}
	if v, ok := kw.Get("job_args"); ok {
		if _, isList := v.([]any); !isList {
			return nil, result("job_args is not a list. please correct and try again.", false, false)
		}
		item.Set("args", v)
	}
	if v, ok := kw.Get("job_kwargs"); ok {
		if _, isMap := v.(*ordered.Map); !isMap {
			return nil, result("job_kwargs is not a dict. please correct and try again.", false, false)
		}
		item.Set("kwargs", v)
	}
	item.Set("maxrunning", valueOr(kw, "maxrunning", 1))
	item.Set("name", valueOr(kw, "name", name))
	item.Set("enabled", valueOr(kw, "enabled", true))
	item.Set("jid_include", valueOr(kw, "jid_include", true))
	if v, ok := kw.Get("splay"); ok {
		if m, isMap := v.(*ordered.Map); isMap {
			v = ordered.FromPairs("start", m.Value("start"), "end", m.Value("end"))
		}
		item.Set("splay", v)
	}
	if v, ok := kw.Get("when"); ok {
		whens, isList := v.([]any)
		if !isList {
			whens = []any{v}
		}
		for _, w := range whens {
			if _, err := schedule.ParseDate(fmt.Sprint(w), time.Now()); err != nil {
				return nil, result(fmt.Sprintf(`Schedule item %v for "when" in invalid.`, w), false, false)
			}
		}
	}
	for _, k := range []string{"range", "when", "once", "once_fmt", "cron", "returner", "after",
		"return_config", "return_kwargs", "until", "run_on_start", "skip_during_range"} {
		if v, ok := kw.Get(k); ok {
			item.Set(k, v)
		}
	}
	return item, nil
}

func valueOr(kw *ordered.Map, key string, def any) any {
	if v, ok := kw.Get(key); ok {
		return v
	}
	return def
}

func buildItem(_ context.Context, c *modules.Call) (any, error) {
	item, fail := buildSchedule(c.Str("name"), c.Kwargs)
	if fail != nil {
		return fail, nil
	}
	return item, nil
}

func add(_ context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	ret := result(fmt.Sprintf("Failed to add job %s to schedule.", name), false, true)
	offline := kwBool(c, "offline")
	cur, err := current(c, schedule.All, offline)
	if err != nil {
		return nil, err
	}
	if cur.Has(name) {
		ret.Set("comment", fmt.Sprintf("Job %s already exists in schedule.", name))
		return ret, nil
	}
	if msg := conflict(c.Kwargs, "Error: "); msg != "" {
		ret.Set("comment", msg)
		return ret, nil
	}
	item, fail := buildSchedule(name, c.Kwargs)
	if fail != nil {
		return fail, nil
	}
	if kwBool(c, "test") {
		ret.Set("comment", fmt.Sprintf("Job: %s would be added to schedule.", name))
		ret.Set("result", true)
		return ret, nil
	}
	s, err := target(c, offline)
	if err != nil || s == nil {
		return ret, err
	}
	if err := s.Add(name, item, offline || persist(c)); err != nil {
		ret.Set("comment", fmt.Sprintf("Failed to add job %s to schedule: %s", name, err))
		return ret, nil
	}
	if !s.List(schedule.All).Has(name) {
		return ret, nil
	}
	ret.Set("result", true)
	ret.Set("comment", fmt.Sprintf("Added job: %s to schedule.", name))
	ret.Value("changes").(*ordered.Map).Set(name, "added")
	return ret, nil
}

func modify(_ context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	ret := result("", true, true)
	if msg := conflict(c.Kwargs, "Error: "); msg != "" {
		ret.Set("result", false)
		if msg[0] == 'E' {
			msg = `Error: Unable to use "seconds", "minutes", "hours", or "days" with "when" option.`
		}
		ret.Set("comment", msg)
		return ret, nil
	}
	offline := kwBool(c, "offline")
	cur, err := current(c, schedule.All, offline)
	if err != nil {
		return nil, err
	}
	old, ok := cur.Value(name).(*ordered.Map)
	if !ok {
		ret.Set("comment", fmt.Sprintf("Job %s does not exist in schedule.", name))
		ret.Set("result", false)
		return ret, nil
	}
	kw := c.Kwargs.Copy()
	if !kw.Has("function") {
		kw.Set("function", old.Value("function"))
	}
	item, fail := buildSchedule(name, kw)
	if fail != nil {
		return fail, nil
	}
	if ordered.Equal(item, old) {
		ret.Set("comment", fmt.Sprintf("Job %s in correct state", name))
		return ret, nil
	}
	ret.Value("changes").(*ordered.Map).Set(name, ordered.FromPairs("old", old, "new", item))
	if kwBool(c, "test") {
		ret.Set("comment", fmt.Sprintf("Job: %s would be modified in schedule.", name))
		return ret, nil
	}
	s, err := target(c, offline)
	if err != nil || s == nil {
		ret.Set("comment", fmt.Sprintf("Failed to modify job %s in schedule.", name))
		ret.Set("result", false)
		return ret, err
	}
	if err := s.Modify(name, item, offline || persist(c)); err != nil {
		ret.Set("comment", fmt.Sprintf("Failed to modify job %s in schedule: %s", name, err))
		ret.Set("result", false)
		return ret, nil
	}
	ret.Set("comment", fmt.Sprintf("Modified job: %s in schedule.", name))
	return ret, nil
}

func del(_ context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	ret := result(fmt.Sprintf("Failed to delete job %s from schedule.", name), false, true)
	if name == "" {
		ret.Set("comment", "Job name is required.")
	}
	if kwBool(c, "test") {
		ret.Set("comment", fmt.Sprintf("Job: %s would be deleted from schedule.", name))
		ret.Set("result", true)
		return ret, nil
	}
	offline := kwBool(c, "offline")
	s, err := target(c, offline)
	if err != nil || s == nil {
		return ret, err
	}
	inOpts, inPillar := s.List(schedule.Opts).Has(name), s.List(schedule.Pillar).Has(name)
	if !inOpts && !inPillar {
		if offline {
			return nil, fmt.Errorf("KeyError: '%s'", name)
		}
		ret.Set("comment", fmt.Sprintf("Job %s does not exist.", name))
		return ret, nil
	}
	if err := s.Delete(name, inOpts && (offline || persist(c))); err != nil {
		return nil, err
	}
	if s.List(schedule.All).Has(name) {
		return ret, nil
	}
	ret.Set("result", true)
	ret.Set("comment", fmt.Sprintf("Deleted Job %s from schedule.", name))
	ret.Value("changes").(*ordered.Map).Set(name, "removed")
	return ret, nil
}

func purge(_ context.Context, c *modules.Call) (any, error) {
	ret := ordered.FromPairs("comment", []any{}, "changes", ordered.New(), "result", true)
	offline := kwBool(c, "offline")
	s, err := target(c, offline)
	if err != nil {
		return nil, err
	}
	if s == nil {
		ret.Set("comment", "Event module not available. Schedule add failed.")
		return ret, nil
	}
	var comments []any
	for _, name := range s.List(schedule.All).StringKeys() {
		if name == "enabled" || (len(name) > 1 && name[:2] == "__") {
			continue
		}
		if kwBool(c, "test") {
			comments = append(comments, fmt.Sprintf("Job: %s would be deleted from schedule.", name))
			continue
		}
		if err := s.Delete(name, offline || persist(c)); err != nil {
			return nil, err
		}
		if s.List(schedule.All).Has(name) {
			comments = append(comments, fmt.Sprintf("Failed to delete job %s from schedule.", name))
			continue
		}
		comments = append(comments, fmt.Sprintf("Deleted job: %s from schedule.", name))
		ret.Value("changes").(*ordered.Map).Set(name, "removed")
	}
	if comments != nil {
		ret.Set("comment", comments)
	}
	return ret, nil
}

func runJob(ctx context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	ret := ordered.FromPairs("comment", []any{}, "result", true)
	if name == "" {
		return result("Job name is required.", false, false), nil
	}
	s := live(c)
	var data *ordered.Map
	if s != nil {
		data, _ = filter(s.List(schedule.All), true, true).Value(name).(*ordered.Map)
	}
	switch {
	case data == nil:
		ret.Set("comment", fmt.Sprintf("Job %s does not exist.", name))
		ret.Set("result", false)
	case !modules.Truthy(data.Value("enabled")) && !c.Bool("force"):
		ret.Set("comment", fmt.Sprintf("Job %s is disabled.", name))
	default:
		// The job runs in the minion's scheduler, not in this call:
		// Salt's run_job fires an event and returns.
		if err := s.RunJob(context.WithoutCancel(ctx), name); err != nil {
			ret.Set("comment", fmt.Sprintf("Failed to run job %s on minion.", name))
			ret.Set("result", false)
			break
		}
		ret.Set("comment", fmt.Sprintf("Scheduling Job %s on minion.", name))
	}
	return ret, nil
}

func setJob(c *modules.Call, on bool) (any, error) {
	name := c.Str("name")
	verb, past := "enable", "Enabled"
	if !on {
		verb, past = "disable", "Disabled"
	}
	ret := ordered.FromPairs("comment", []any{}, "result", true, "changes", ordered.New())
	if name == "" {
		ret.Set("comment", "Job name is required.")
		ret.Set("result", false)
	}
	// Salt's enable_job reads test from __opts__, disable_job from kwargs.
	if (on && c.Env != nil && c.Env.Test) || (!on && kwBool(c, "test")) {
		ret.Set("comment", fmt.Sprintf("Job: %s would be %sd in schedule.", name, verb))
		return ret, nil
	}
	s := live(c)
	if s == nil || (!s.List(schedule.Opts).Has(name) && !s.List(schedule.Pillar).Has(name)) {
		ret.Set("comment", fmt.Sprintf("Job %s does not exist.", name))
		ret.Set("result", false)
		return ret, nil
	}
	inOpts := s.List(schedule.Opts).Has(name)
	if err := s.SetJobEnabled(name, on, inOpts && persist(c)); err != nil {
		return nil, err
	}
	data, _ := filter(s.List(schedule.All), true, true).Value(name).(*ordered.Map)
	if data != nil && modules.Truthy(data.Value("enabled")) == on {
		ret.Set("comment", fmt.Sprintf("%s Job %s in schedule.", past, name))
		ret.Value("changes").(*ordered.Map).Set(name, verb+"d")
		return ret, nil
	}
	ret.Set("result", false)
	ret.Set("comment", fmt.Sprintf("Failed to %s job %s in schedule.", verb, name))
	return ret, nil
}

func enableJob(_ context.Context, c *modules.Call) (any, error)  { return setJob(c, true) }
func disableJob(_ context.Context, c *modules.Call) (any, error) { return setJob(c, false) }

func setAll(c *modules.Call, on bool) (any, error) {
	verb, past := "enable", "Enabled"
	if !on {
		verb, past = "disable", "Disabled"
	}
	ret := ordered.FromPairs("comment", []any{}, "changes", ordered.New(), "result", true)
	if kwBool(c, "test") {
		ret.Set("comment", fmt.Sprintf("Schedule would be %sd.", verb))
		return ret, nil
	}
	s := live(c)
	if s == nil {
		ret.Set("comment", "Event module not available. Schedule enable job failed.")
		return ret, nil
	}
	if err := s.SetEnabled(on, persist(c)); err != nil {
		return nil, err
	}
	if s.Enabled() != on {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Failed to %s schedule on minion.", verb))
		return ret, nil
	}
	ret.Set("comment", fmt.Sprintf("%s schedule on minion.", past))
	ret.Value("changes").(*ordered.Map).Set("schedule", verb+"d")
	return ret, nil
}

func enable(_ context.Context, c *modules.Call) (any, error)  { return setAll(c, true) }
func disable(_ context.Context, c *modules.Call) (any, error) { return setAll(c, false) }

func save(_ context.Context, c *modules.Call) (any, error) {
	ret := ordered.FromPairs("comment", []any{}, "result", true)
	if kwBool(c, "test") {
		ret.Set("comment", "Schedule would be saved.")
		return ret, nil
	}
	s := live(c)
	if s == nil {
		ret.Set("comment", "Event module not available. Schedule save failed.")
		return ret, nil
	}
	if err := s.Save(); err != nil {
		ret.Set("result", false)
		ret.Set("comment", "Failed to save schedule.")
		if c.Env.Log != nil {
			c.Env.Log.Error("Failed to persist the updated schedule", "error", err.Error())
		}
		return ret, nil
	}
	ret.Set("comment", "Schedule (non-pillar items) saved.")
	return ret, nil
}
