// Package schedule is Salt's schedule execution module
// (salt/modules/schedule.py): list, add, modify, delete, enable,
// disable, enable_job, disable_job, run_job, save, purge, is_enabled
// and build_schedule_item, with Salt's return shapes and comments.
//
// Salt's functions ask the running minion over its event bus
// (manage_schedule); here they reach the minion's scheduler through
// modules.Env.Minion (schedule.Provider). Without a running minion
// (salt-call beside none), offline=True edits minion.d/_schedule.conf
// as Salt does, and the other calls fail as Salt's do when the event
// finds no minion.
//
// reload, move, copy, postpone_job, skip_job, show_next_fire_time and
// job_status are in jobs.go.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/internal/schedule"
	"github.com/brinesalt/brine/state/modules"
)

func init() {
	kw := func(params ...modules.Param) modules.Spec { return modules.Spec{Params: params, VarKw: true} }
	name := modules.Param{Name: "name"}
	for _, f := range []modules.Function{
		{Name: "schedule.list", Doc: "List the jobs scheduled on the minion; with return_yaml (the default) Salt's YAML text, each job marked saved or not.",
			Spec: modules.Spec{Params: []modules.Param{
				{Name: "show_all", Default: false, Optional: true}, {Name: "show_disabled", Default: true, Optional: true},
				{Name: "where", Optional: true}, {Name: "return_yaml", Default: true, Optional: true},
				{Name: "offline", Default: false, Optional: true}}},
			Fn: list},
		{Name: "schedule.is_enabled", Doc: "Whether the schedule (no name) is enabled, or the job's entry.", Spec: modules.Spec{Params: []modules.Param{{Name: "name", Optional: true}}}, Fn: isEnabled},
		{Name: "schedule.add", Doc: "Add a job to the schedule (function=, seconds/minutes/hours/days or cron or when or once, job_args, job_kwargs, splay, range, returner, …).", Spec: kw(name), Fn: add},
		{Name: "schedule.modify", Doc: "Modify an existing job in the schedule.", Spec: kw(name), Fn: modify},
		{Name: "schedule.delete", Doc: "Delete a job from the minion's schedule.", Spec: kw(name), Fn: del},
		{Name: "schedule.purge", Doc: "Delete every job scheduled on the minion.", Spec: kw(), Fn: purge},
		{Name: "schedule.build_schedule_item", Doc: "Build a schedule job entry from keyword arguments.", Spec: kw(name), Fn: buildItem},
		{Name: "schedule.run_job", Doc: "Run a scheduled job on the minion now (force=True runs a disabled one).", Spec: modules.Spec{Params: []modules.Param{name, {Name: "force", Default: false, Optional: true}}}, Fn: runJob},
		{Name: "schedule.enable_job", Doc: "Enable a job in the minion's schedule.", Spec: kw(name), Fn: enableJob},
		{Name: "schedule.disable_job", Doc: "Disable a job in the minion's schedule.", Spec: kw(name), Fn: disableJob},
		{Name: "schedule.enable", Doc: "Enable all scheduled jobs on the minion.", Spec: kw(), Fn: enable},
		{Name: "schedule.disable", Doc: "Disable all scheduled jobs on the minion.", Spec: kw(), Fn: disable},
		{Name: "schedule.save", Doc: "Save the schedule (non-pillar items) to minion.d/_schedule.conf.", Spec: kw(), Fn: save},
		{Name: "schedule.reload", Doc: "Reload saved scheduled jobs on the minion (the pillar's, and minion.d/schedule.conf).", Spec: modules.Spec{}, Fn: reload},
		{Name: "schedule.move", Doc: "Move scheduled job to another minion or minions (publish.publish of schedule.add, then delete).", Spec: kw(name, modules.Param{Name: "target"}), Fn: copyJob(true)},
		{Name: "schedule.copy", Doc: "Copy scheduled job to another minion or minions (publish.publish of schedule.add).", Spec: kw(name, modules.Param{Name: "target"}), Fn: copyJob(false)},
		{Name: "schedule.postpone_job", Doc: "Postpone a job in the minion's schedule from current_time to new_time (time_fmt, %Y-%m-%dT%H:%M:%S by default).", Spec: kw(name, modules.Param{Name: "current_time"}, modules.Param{Name: "new_time"}), Fn: postponeJob},
		{Name: "schedule.skip_job", Doc: "Skip a job in the minion's schedule at current_time (time_fmt, %Y-%m-%dT%H:%M:%S by default).", Spec: kw(name, modules.Param{Name: "current_time"}), Fn: skipJob},
		{Name: "schedule.show_next_fire_time", Doc: "Show the next fire time for scheduled job.", Spec: kw(name), Fn: showNextFireTime},
		{Name: "schedule.job_status", Doc: "Show the information for a particular job.", Spec: modules.Spec{Params: []modules.Param{name, {Name: "time_fmt", Default: "%Y-%m-%dT%H:%M:%S", Optional: true}}}, Fn: jobStatus},
	} {
		modules.Register(f)
	}
}

// result is Salt's {"comment", "result", "changes"} in that order.
func result(comment any, ok bool, withChanges bool) *ordered.Map {
	m := ordered.FromPairs("comment", comment, "result", ok)
	if withChanges {
		m.Set("changes", ordered.New())
	}
	return m
}

func kwBool(c *modules.Call, key string) bool { return modules.Truthy(c.Kwargs.Value(key)) }

func persist(c *modules.Call) bool {
	v, ok := c.Kwargs.Get("persist")
	return !ok || modules.Truthy(v)
}

// live is the running minion's scheduler, or nil.
func live(c *modules.Call) *schedule.Schedule {
	if c.Env == nil {
		return nil
	}
	if p, ok := c.Env.Minion.(schedule.Provider); ok {
		return p.Schedule()
	}
	return nil
}

// confFile is _get_schedule_config_file.
func confFile(c *modules.Call) string {
	dir, _ := c.Env.Opts.Value("conf_dir").(string)
	if dir == "" {
		if f, ok := c.Env.Opts.Value("conf_file").(string); ok && f != "" {
			dir = filepath.Dir(f)
		}
	}
	if dir == "" {
		dir = "/etc/salt"
	}
	include, _ := c.Env.Opts.Value("default_include").(string)
	if include == "" {
		include = "minion.d/*.conf"
	}
	return schedule.ConfFile(dir, include)
}

// saved is the schedule in _schedule.conf.
func saved(c *modules.Call) (*ordered.Map, error) {
	path := confFile(c)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ordered.New(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read schedule: %w", err)
	}
	v, err := saltyaml.Load(b, path)
	if err != nil {
		return nil, fmt.Errorf("read schedule: %w", err)
	}
	doc, _ := v.(*ordered.Map)
	s, _ := doc.Value("schedule").(*ordered.Map)
	if s == nil {
		s = ordered.New()
	}
	return s, nil
}

// target is the scheduler a call manages: the live one, or with
// offline=True one over _schedule.conf that saves back to it.
func target(c *modules.Call, offline bool) (*schedule.Schedule, error) {
	if !offline {
		return live(c), nil
	}
	s, err := saved(c)
	if err != nil {
		return nil, err
	}
	return schedule.New(schedule.Options{Schedule: s, ConfFile: confFile(c), Exec: func(context.Context, schedule.Run) {}}), nil
}

// current is list_(show_all=True, return_yaml=False) as a map.
func current(c *modules.Call, where schedule.Where, offline bool) (*ordered.Map, error) {
	s, err := target(c, offline)
	if err != nil || s == nil {
		return ordered.New(), err
	}
	return filter(s.List(where), true, true), nil
}

// filter is list_'s clean-up: hidden __ jobs (unless showAll), keys
// outside SCHEDULE_CONF and None values dropped, "true"/"false" strings
// made booleans, enabled defaulted, disabled jobs dropped unless
// showDisabled.
func filter(sched *ordered.Map, showAll, showDisabled bool) *ordered.Map {
	out := ordered.New()
	sched.Range(func(k, v any) bool {
		job := ordered.KeyString(k)
		data, isMap := v.(*ordered.Map)
		if schedule.IsGlobal(job) || !isMap {
			out.Set(job, v)
			return true
		}
		if len(job) > 1 && job[:2] == "__" && !showAll {
			return true
		}
		clean := ordered.New()
		data.Range(func(ik, iv any) bool {
			key := ordered.KeyString(ik)
			if !slices.Contains(schedule.KnownKeys, key) || iv == nil || key == "_seconds" {
				return true
			}
			switch iv {
			case "true":
				iv = true
			case "false":
				iv = false
			}
			clean.Set(key, iv)
			return true
		})
		if !clean.Has("enabled") {
			clean.Set("enabled", true)
		}
		if !showDisabled && !modules.Truthy(clean.Value("enabled")) {
			return true
		}
		out.Set(job, clean)
		return true
	})
	return out
}

func list(_ context.Context, c *modules.Call) (any, error) {
	offline := c.Bool("offline")
	var sched *ordered.Map
	savedSched, err := saved(c)
	if err != nil {
		return nil, err
	}
	if offline {
		sched = savedSched.Copy()
	} else if s := live(c); s != nil {
		sched = s.List(schedule.Where(c.Str("where")))
	} else {
		sched = ordered.New()
	}
	out := filter(sched, c.Bool("show_all"), c.Bool("show_disabled"))
	if !c.Bool("return_yaml") {
		return out, nil
	}
	out.Range(func(k, v any) bool {
		if m, ok := v.(*ordered.Map); ok {
			m.Set("saved", savedSched.Has(k))
		}
		return true
	})
	return saltyaml.Dump(ordered.FromPairs("schedule", out), saltyaml.DumpOptions{SortKeys: true})
}

func isEnabled(_ context.Context, c *modules.Call) (any, error) {
	cur, err := current(c, schedule.All, false)
	if err != nil {
		return nil, err
	}
	name := c.Str("name")
	if name == "" {
		if v, ok := cur.Get("enabled"); ok {
			return v, nil
		}
		return true, nil
	}
	if v, ok := cur.Get(name); ok {
		return v, nil
	}
	return ordered.New(), nil
}
