package run

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/shell"
)

func (r *Runner) needsRunCheck(low Chunk) bool {
	if !low.Has("unless") && !low.Has("onlyif") && !low.Has("creates") {
		return false
	}
	return !r.States.Has(r.Env, str(low.Value("state"))+".mod_run_check")
}

// checkState accumulates the outcome of unless/onlyif/creates.
type checkState struct {
	result    bool // true: skip the state
	comment   string
	skipWatch bool
	hasSkip   bool
}

// runCheck evaluates onlyif, unless and creates (salt/state.py
// _run_check). A return with result true means the state is skipped.
func (r *Runner) runCheck(ctx context.Context, env *modules.Env, low Chunk) *ordered.Map {
	// State.call starts from this return and updates it with the check.
	ret := ordered.FromPairs("result", false, "name", low.Value("name"), "changes", ordered.New())
	var comments []string
	for _, k := range []string{"__sls__", "__id__", "name"} {
		ret.Set(k, low.Value(k))
	}
	opts := r.cmdOpts(low)
	skipWatch, hasSkip := false, false
	apply := func(c checkState, first bool) {
		if first {
			ret.Set("result", c.result)
		} else {
			ret.Set("result", c.result || ret.Value("result") == true)
		}
		comments = append(comments, c.comment)
		if c.hasSkip {
			skipWatch = c.skipWatch || (!first && skipWatch)
			hasSkip = true
		}
	}
	if low.Has("onlyif") {
		apply(r.checkOnlyif(ctx, env, low.Value("onlyif"), opts), true)
	}
	if low.Has("unless") {
		apply(r.checkUnless(ctx, env, low.Value("unless"), opts), !low.Has("onlyif"))
	}
	if low.Has("creates") {
		apply(checkCreates(low.Value("creates")), false)
	}
	ret.Set("comment", strings.Join(comments, "\n"))
	if hasSkip {
		ret.Set("skip_watch", skipWatch)
	}
	return ret
}

func (r *Runner) cmdOpts(low Chunk) shell.Spec {
	s := shell.Spec{Cwd: strOr(low.Value("cwd")), RunAs: strOr(low.Value("runas")), Env: low.Value("env")}
	exclude := map[string]bool{}
	switch x := low.Value("cmd_opts_exclude").(type) {
	case string:
		exclude[x] = true
	case []any:
		for _, e := range x {
			exclude[str(e)] = true
		}
	}
	if exclude["cwd"] {
		s.Cwd = ""
	}
	if exclude["runas"] {
		s.RunAs = ""
	}
	if exclude["env"] {
		s.Env = nil
	}
	if sh, ok := low.Get("shell"); ok && !exclude["shell"] {
		s.Shell = strOr(sh)
	} else if r.Env.Grains() != nil {
		s.Shell = strOr(r.Env.Grains().Value("shell"))
	}
	if t, ok := low.Value("timeout").(int); ok && !exclude["timeout"] {
		s.Timeout = time.Duration(t) * time.Second
	}
	if !exclude["success_retcodes"] {
		switch rc := low.Value("success_retcodes").(type) {
		case int:
			s.SuccessRetcodes = []int{rc}
		case []any:
			for _, x := range rc {
				if i, ok := x.(int); ok {
					s.SuccessRetcodes = append(s.SuccessRetcodes, i)
				}
			}
		}
	}
	return s
}

func strOr(v any) string {
	if v == nil {
		return ""
	}
	return str(v)
}

// retcode runs a check command; a command that cannot start counts as
// the given failure code.
func retcode(ctx context.Context, s shell.Spec, cmd string, onErr int) int {
	s.Cmd = cmd
	out, err := shell.Run(ctx, s)
	if err != nil {
		return onErr
	}
	return out.Retcode
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// checkFunction runs the `fun:` form of unless/onlyif through the
// execution modules and returns its result and the retcode it set.
func (r *Runner) checkFunction(ctx context.Context, env *modules.Env, entry *ordered.Map) (any, int, error) {
	e := entry.Copy()
	fun := str(e.Value("fun"))
	e.Delete("fun")
	getReturn := e.Value("get_return")
	e.Delete("get_return")
	args, _ := e.Value("args").([]any)
	e.Delete("args")
	fenv := *env
	fenv.Context = map[string]any{}
	res, err := fenv.Run(ctx, fun, args, e)
	if err != nil {
		return nil, 0, err
	}
	if gr, ok := getReturn.(string); ok && gr != "" {
		res = traverse(res, gr)
	}
	rc, _ := fenv.Context["retcode"].(int)
	return res, rc, nil
}

func traverse(v any, path string) any {
	for _, part := range strings.Split(path, ":") {
		m, ok := v.(*ordered.Map)
		if !ok {
			return nil
		}
		v = m.Value(part)
	}
	return v
}

func (r *Runner) checkOnlyif(ctx context.Context, env *modules.Env, v any, opts shell.Spec) checkState {
	st := checkState{}
	skip := checkState{result: true, comment: "onlyif condition is false", skipWatch: true, hasSkip: true}
	for _, entry := range asList(v) {
		switch e := entry.(type) {
		case string:
			if retcode(ctx, opts, e, 100) != 0 {
				return skip
			}
			st.comment = "onlyif condition is true"
		case *ordered.Map:
			if !e.Has("fun") {
				st.comment = fmt.Sprintf("no `fun` argument in onlyif: %s", str(e))
				return st
			}
			res, rc, err := r.checkFunction(ctx, env, e)
			if err != nil {
				return checkState{comment: err.Error()}
			}
			if rc != 0 || !modules.Truthy(res) {
				return skip
			}
			st.comment = "onlyif condition is true"
		default:
			return checkState{comment: "onlyif execution failed, bad type passed"}
		}
	}
	return st
}

func (r *Runner) checkUnless(ctx context.Context, env *modules.Env, v any, opts shell.Spec) checkState {
	st := checkState{}
	run := checkState{comment: "unless condition is false"}
	for _, entry := range asList(v) {
		switch e := entry.(type) {
		case string:
			if retcode(ctx, opts, e, 0) != 0 {
				return run
			}
			st = checkState{result: true, comment: "unless condition is true", skipWatch: true, hasSkip: true}
		case *ordered.Map:
			if !e.Has("fun") {
				st.comment = fmt.Sprintf("no `fun` argument in unless: %s", str(e))
				return st
			}
			res, rc, err := r.checkFunction(ctx, env, e)
			if err != nil {
				return checkState{comment: err.Error()}
			}
			if rc != 0 {
				return run
			}
			if !modules.Truthy(res) {
				return run
			}
			st = checkState{result: true, comment: "unless condition is true", skipWatch: true, hasSkip: true}
		default:
			st = checkState{comment: "unless condition is false, bad type passed"}
		}
	}
	return st
}

func checkCreates(v any) checkState {
	exists := func(p any) bool { _, err := os.Stat(str(p)); return err == nil }
	switch x := v.(type) {
	case string:
		if exists(x) {
			return checkState{result: true, comment: x + " exists", skipWatch: true, hasSkip: true}
		}
	case []any:
		all := true
		for _, p := range x {
			all = all && exists(p)
		}
		if all {
			return checkState{result: true, comment: "All files in creates exist", skipWatch: true, hasSkip: true}
		}
	}
	return checkState{comment: "Creates files not found"}
}

// runCheckCmd lets check_cmd decide the result after the state ran
// (salt/state.py _run_check_cmd): the first failing command fails it.
func (r *Runner) runCheckCmd(ctx context.Context, low Chunk, ret *ordered.Map) {
	opts := shell.Spec{}
	if r.Env.Grains() != nil {
		opts.Shell = strOr(r.Env.Grains().Value("shell"))
	}
	result, comment := false, ""
	for _, c := range asList(low.Value("check_cmd")) {
		rc := retcode(ctx, opts, str(c), 1)
		if rc != 0 {
			ret.Set("result", false)
			ret.Set("comment", "check_cmd determined the state failed")
			return
		}
		if !result {
			result, comment = true, "check_cmd determined the state succeeded"
		}
	}
	ret.Set("result", result)
	ret.Set("comment", comment)
}
