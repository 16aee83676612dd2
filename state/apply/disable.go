package apply

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// disabledRuns is the state_runs_disabled grain as a list (grains.get
// state_runs_disabled; anything but a list counts as empty).
func disabledRuns(env *modules.Env) []any {
	if env.Grains() == nil {
		return nil
	}
	l, _ := env.Grains().Value("state_runs_disabled").([]any)
	return append([]any(nil), l...)
}

// disabled is _disabled: the messages for the names in funs that a
// state.disable entry covers. An entry with ".*" covers every name that
// starts with its part before the first dot and a dot ("web.*" covers
// "web.conf"); any other entry covers exactly its own name.
func disabled(env *modules.Env, funs []string) []any {
	var out []any
	for _, name := range funs {
		for _, d := range disabledRuns(env) {
			entry := ordered.KeyString(d)
			if strings.Contains(entry, ".*") {
				prefix, _, _ := strings.Cut(entry, ".")
				if !strings.HasSuffix(prefix, ".") {
					prefix += "."
				}
				if strings.HasPrefix(name, prefix) {
					out = append(out, fmt.Sprintf("The state file \"%s\" is currently disabled by \"%s\", to re-enable, run state.enable %s.", name, entry, entry))
				}
			} else if entry == name {
				out = append(out, fmt.Sprintf("The state file \"%s\" is currently disabled, to re-enable, run state.enable %s.", entry, entry))
			}
		}
	}
	return out
}

// disabledMods is sls's check: a list of mods is checked name by name,
// anything else as one string ("a,b" as given on the command line).
func disabledMods(env *modules.Env, mods any) []any {
	var names []string
	if l, ok := mods.([]any); ok {
		for _, m := range l {
			names = append(names, ordered.KeyString(m))
		}
	} else {
		names = []string{ordered.KeyString(mods)}
	}
	return disabled(env, names)
}

// setDisabled is state.disable (enable false) and state.enable (enable
// true): update the state_runs_disabled grain through grains.setval and
// return {res, msg}.
func setDisabled(ctx context.Context, c *modules.Call, enable bool) (any, error) {
	runs := disabledRuns(c.Env)
	var msgs []string
	changed := false
	for _, s := range splitStrings(c.Arg("states")) {
		i := indexOf(runs, s)
		switch {
		case enable && i < 0:
			msgs = append(msgs, fmt.Sprintf("Info: %s state already enabled.", s))
		case enable:
			msgs = append(msgs, fmt.Sprintf("Info: %s state enabled.", s))
			runs = append(runs[:i], runs[i+1:]...)
			changed = true
		case i >= 0:
			msgs = append(msgs, fmt.Sprintf("Info: %s state already disabled.", s))
		default:
			msgs = append(msgs, fmt.Sprintf("Info: %s state disabled.", s))
			runs = append(runs, s)
			changed = true
		}
	}
	if changed {
		if runs == nil {
			runs = []any{}
		}
		if _, err := c.Env.Run(ctx, "grains.setval", []any{"state_runs_disabled", runs}, nil); err != nil {
			return nil, fmt.Errorf("set grain state_runs_disabled: %w", err)
		}
	}
	return ordered.FromPairs("res", true, "msg", strings.Join(msgs, "\n")), nil
}

func indexOf(l []any, s string) int {
	for i, v := range l {
		if ordered.KeyString(v) == s {
			return i
		}
	}
	return -1
}

func (m *module) disable(ctx context.Context, c *modules.Call) (any, error) {
	return setDisabled(ctx, c, false)
}

func (m *module) enable(ctx context.Context, c *modules.Call) (any, error) {
	return setDisabled(ctx, c, true)
}

// listDisabled is state.list_disabled: grains.get state_runs_disabled,
// which is "" when the grain is not set.
func (m *module) listDisabled(_ context.Context, c *modules.Call) (any, error) {
	if c.Env.Grains() != nil {
		if v, ok := c.Env.Grains().Get("state_runs_disabled"); ok {
			return v, nil
		}
	}
	return "", nil
}
