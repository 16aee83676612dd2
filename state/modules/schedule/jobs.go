package schedule

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/pytime"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/internal/schedule"
	"github.com/brinesalt/brine/state/modules"
)

// listResult is {"comment": [...], "result": ...}, the shape reload,
// move and copy start from.
func listResult() *ordered.Map { return ordered.FromPairs("comment", []any{}, "result", true) }

func appendComment(ret *ordered.Map, line string) {
	l, _ := ret.Value("comment").([]any)
	ret.Set("comment", append(l, line))
}

// reload is reload_: the pillar's schedule refreshed when the pillar
// has one, then the entries of <conf dir>/minion.d/schedule.conf (Salt
// reads schedule.conf there, not the _schedule.conf persist writes)
// merged into the running minion's schedule.
func reload(ctx context.Context, c *modules.Call) (any, error) {
	ret := listResult()
	if c.Env.Pillar.Has("schedule") {
		if r := c.Env.Minion; r != nil && r.RefreshPillar(ctx) == nil {
			appendComment(ret, "Reloaded schedule from pillar on minion.")
		} else {
			appendComment(ret, "Failed to reload schedule from pillar on minion.")
			ret.Set("result", false)
		}
	}
	sfn := filepath.Join(filepath.Dir(confFile(c)), "schedule.conf")
	b, err := os.ReadFile(sfn)
	if errors.Is(err, fs.ErrNotExist) {
		return ret, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", sfn, err)
	}
	empty := "Failed to reload schedule on minion.  Saved file is empty or invalid."
	v, err := saltyaml.Load(b, sfn)
	if err != nil {
		appendComment(ret, "Unable to read existing schedule file: "+err.Error())
	}
	doc, _ := v.(*ordered.Map)
	inner, _ := doc.Value("schedule").(*ordered.Map)
	switch s := live(c); {
	case doc == nil || inner == nil || inner.Len() == 0:
		appendComment(ret, empty)
		ret.Set("result", false)
	case s == nil:
		appendComment(ret, "Failed to reload schedule on minion from schedule.conf.")
		ret.Set("result", false)
	default:
		s.Reload(doc)
		appendComment(ret, "Reloaded schedule on minion from schedule.conf.")
	}
	return ret, nil
}

// copyJob is copy and, with remove, move: the job's entry published to
// target as schedule.add key=value arguments (publish.publish, so the
// master's peer ACL applies); a move deletes the job here once every
// answering minion added it.
func copyJob(remove bool) modules.Func {
	verb, past := "copied", "Copied Job %s from schedule to minion(s)."
	if remove {
		verb, past = "moved", "Moved Job %s from schedule."
	}
	return func(ctx context.Context, c *modules.Call) (any, error) {
		name := c.Str("name")
		ret := listResult()
		if name == "" {
			ret.Set("comment", "Job name is required.")
			ret.Set("result", false)
		}
		if kwBool(c, "test") {
			ret.Set("comment", fmt.Sprintf("Job: %s would be %s from schedule.", name, verb))
			return ret, nil
		}
		s := live(c)
		data, where := findJob(s, name)
		if data == nil {
			ret.Set("comment", fmt.Sprintf("Job %s does not exist.", name))
			ret.Set("result", false)
			return ret, nil
		}
		var args []any
		data.Range(func(k, v any) bool {
			args = append(args, ordered.KeyString(k)+"="+pyStr(v))
			return true
		})
		resp, err := c.Env.Run(ctx, "publish.publish", []any{c.Arg("target"), "schedule.add", args}, nil)
		if err != nil {
			return nil, err
		}
		answers, _ := resp.(*ordered.Map)
		var minions, failed []any
		answers.Range(func(k, v any) bool {
			minions = append(minions, k)
			if !modules.Truthy(v) {
				failed = append(failed, k)
			}
			return true
		})
		switch {
		case answers.Len() == 0:
			ret.Set("comment", "no servers answered the published schedule.add command")
		case len(failed) > 0:
			ret.Set("comment", "the following minions return False")
			ret.Set("minions", failed)
		default:
			if remove {
				if err := s.Delete(name, where == schedule.Opts); err != nil {
					return nil, err
				}
			}
			ret.Set("result", true)
			ret.Set("comment", fmt.Sprintf(past, name))
			ret.Set("minions", minions)
		}
		return ret, nil
	}
}

// findJob is the job as list_(show_all=True, return_yaml=False) shows
// it, from the configuration or else the pillar.
func findJob(s *schedule.Schedule, name string) (*ordered.Map, schedule.Where) {
	if s == nil {
		return nil, ""
	}
	for _, where := range []schedule.Where{schedule.Opts, schedule.Pillar} {
		if data, ok := filter(s.List(where), true, true).Value(name).(*ordered.Map); ok {
			return data, where
		}
	}
	return nil, ""
}

// pyStr is Python's str() of a value, as f"{key}={value}" writes it.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return py.Repr(v)
}

func timeFmt(c *modules.Call) string {
	if f, ok := c.Kwargs.Value("time_fmt").(string); ok && f != "" {
		return f
	}
	return schedule.DefaultTimeFmt
}

// validTime reports whether value parses with format, logging Salt's
// line when it does not.
func validTime(c *modules.Call, value, format string) bool {
	if _, err := pytime.Strptime(value, format); err != nil {
		c.Env.Log.Error(fmt.Sprintf("Date string could not be parsed: %s, %s", value, format))
		return false
	}
	return true
}

func testMode(c *modules.Call) bool { return modules.Truthy(c.Env.Opts.Value("test")) }

// postponeJob is postpone_job: current_time becomes a skip_explicit
// time and new_time a run_explicit one.
func postponeJob(_ context.Context, c *modules.Call) (any, error) {
	name, cur, next, format := c.Str("name"), c.Str("current_time"), c.Str("new_time"), timeFmt(c)
	ret := ordered.FromPairs("comment", []any{}, "result", false)
	switch {
	case name == "":
		ret.Set("comment", "Job name is required.")
		return ret, nil
	case cur == "":
		ret.Set("comment", "Job current time is required.")
		return ret, nil
	case !validTime(c, cur, format):
		ret.Set("comment", "Date string could not be parsed.")
		return ret, nil
	case next == "":
		ret.Set("comment", "Job new_time is required.")
		return ret, nil
	case !validTime(c, next, format):
		ret.Set("comment", "Date string could not be parsed.")
		return ret, nil
	}
	ret.Set("result", true)
	if testMode(c) {
		ret.Set("comment", fmt.Sprintf("Job: %s would be postponed in schedule.", name))
		return ret, nil
	}
	return explicitChange(c, name, "Postponed Job %s in schedule.", "Failed to postpone job %s in schedule.",
		"Event module not available. Schedule postpone job failed.", func(s *schedule.Schedule) bool {
			s.AddExplicit(name, "skip_explicit", cur, format)
			return s.AddExplicit(name, "run_explicit", next, format)
		}), nil
}

// skipJob is skip_job: current_time becomes a skip_explicit time.
func skipJob(_ context.Context, c *modules.Call) (any, error) {
	name, cur, format := c.Str("name"), c.Str("current_time"), timeFmt(c)
	ret := ordered.FromPairs("comment", []any{}, "result", true)
	if name == "" {
		ret.Set("comment", "Job name is required.")
		ret.Set("result", false)
	}
	if cur == "" {
		ret.Set("comment", "Job time is required.")
		ret.Set("result", false)
	} else if !validTime(c, cur, format) {
		ret.Set("comment", "Date string could not be parsed.")
		ret.Set("result", false)
		return ret, nil
	}
	if testMode(c) {
		ret.Set("comment", fmt.Sprintf("Job: %s would be skipped in schedule.", name))
		return ret, nil
	}
	return explicitChange(c, name, "Added Skip Job %s in schedule.", "Failed to skip job %s in schedule.",
		"Event module not available. Schedule skip job failed.", func(s *schedule.Schedule) bool {
			return s.AddExplicit(name, "skip_explicit", cur, format)
		}), nil
}

// explicitChange runs change on the live scheduler for a job that is
// there: done (the job is there and enabled afterwards) or failed.
// Without a running minion Salt's event finds no listener and the
// function answers its initial result.
func explicitChange(c *modules.Call, name, done, failed, noMinion string, change func(*schedule.Schedule) bool) *ordered.Map {
	ret := ordered.FromPairs("comment", []any{}, "result", true)
	s := live(c)
	if data, _ := findJob(s, name); data == nil {
		if s == nil {
			ret.Set("comment", noMinion)
			return ret
		}
		ret.Set("comment", fmt.Sprintf("Job %s does not exist.", name))
		ret.Set("result", false)
		return ret
	}
	if change(s) {
		ret.Set("comment", fmt.Sprintf(done, name))
	} else {
		ret.Set("comment", fmt.Sprintf(failed, name))
		ret.Set("result", false)
	}
	return ret
}

// showNextFireTime is show_next_fire_time: {"result": True,
// "next_fire_time": "%Y-%m-%dT%H:%M:%S"}, or Salt's comment when the
// time is not known.
func showNextFireTime(_ context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	ret := ordered.FromPairs("result", true)
	if name == "" {
		ret.Set("comment", "Job name is required.")
		ret.Set("result", false)
	}
	s := live(c)
	if s == nil {
		return ordered.FromPairs("comment", "Event module not available. Schedule show next fire time failed.", "result", true), nil
	}
	if t, ok := s.NextFireTime(name); ok {
		ret.Set("next_fire_time", pytime.Strftime(t, schedule.DefaultTimeFmt))
	} else {
		ret.Set("comment", "next fire time not available.")
	}
	return ret, nil
}

// jobStatus is job_status: the job's entry with the scheduler's
// bookkeeping, times in time_fmt; {} for a job that is not there.
func jobStatus(_ context.Context, c *modules.Call) (any, error) {
	s := live(c)
	if s == nil {
		return ordered.FromPairs("comment", "Event module not available. Schedule list failed.", "result", true), nil
	}
	format := c.Str("time_fmt")
	if format == "" {
		format = schedule.DefaultTimeFmt
	}
	return s.Status(c.Str("name"), format), nil
}
