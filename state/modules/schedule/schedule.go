// Package schedule is the read side of Salt's schedule execution module
// (salt/modules/schedule.py) for a minion without a scheduler: Brine's
// minions run no scheduled jobs, so schedule.list answers what Salt
// answers for a minion whose schedule is empty. Web front-ends call it
// when they list a minion's jobs.
//
// Not here: add, modify, delete, enable, disable, run_job and the rest,
// which need a scheduler.
package schedule

import (
	"context"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func init() {
	modules.Register(modules.Function{Name: "schedule.list",
		Doc: "List the jobs scheduled on the minion (none: Brine's minions have no scheduler). With return_yaml (the default) the answer is Salt's YAML text, else the mapping.",
		Spec: modules.Spec{Params: []modules.Param{
			{Name: "show_all", Default: false, Optional: true}, {Name: "show_disabled", Default: true, Optional: true},
			{Name: "where", Optional: true}, {Name: "return_yaml", Default: true, Optional: true},
			{Name: "offline", Default: false, Optional: true}}},
		Fn: list})
}

// list is schedule.list over an empty schedule: safe_dump({"schedule":
// {}}, default_flow_style=False), or {} without return_yaml.
func list(_ context.Context, c *modules.Call) (any, error) {
	if c.Bool("return_yaml") {
		return "schedule: {}\n", nil
	}
	return ordered.New(), nil
}
