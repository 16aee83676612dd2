package apply

import (
	"context"
	"errors"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/modules"
)

// errPillar is raised by the show_* functions when pillar failed to
// render (CommandExecutionError "Pillar failed to render").
func errPillar(env *modules.Env) error {
	setRetcode(env, exPillarFailure)
	return &modules.ExecutionError{Msg: "Pillar failed to render", Err: errors.New("pillar failed to render")}
}

func chunksList(chunks []compile.Chunk) []any {
	out := make([]any, len(chunks))
	for i, c := range chunks {
		out[i] = c
	}
	return out
}

func (m *module) renderMods(ctx context.Context, c *modules.Call) (*job, *ordered.Map, []string, error) {
	j, err := m.newJob(ctx, c.Env, c.Kwargs, c.Arg("test"))
	if err != nil {
		return nil, nil, nil, err
	}
	if j.saltenv == "" {
		j.saltenv = "base"
	}
	if len(j.pillarErrors(c.Kwargs)) > 0 {
		return nil, nil, nil, errPillar(c.Env)
	}
	high, errs := j.highstate().RenderHighstate(ctx, compile.Single(j.saltenv, splitStrings(c.Arg("mods"))))
	errs = append(errs, compile.VerifyHigh(high)...)
	return j, high, errs, nil
}

// showSLS returns the high data of SLS files before extend and requisite_in.
func (m *module) showSLS(ctx context.Context, c *modules.Call) (any, error) {
	_, high, errs, err := m.renderMods(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		setRetcode(c.Env, exCompilerError)
		return strList(errs), nil
	}
	return high, nil
}

// showLowSLS returns the low chunks of SLS files, without extend and
// requisite_in applied.
func (m *module) showLowSLS(ctx context.Context, c *modules.Call) (any, error) {
	_, high, errs, err := m.renderMods(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		setRetcode(c.Env, exCompilerError)
		return strList(errs), nil
	}
	return chunksList(compile.CompileHigh(high)), nil
}

func (m *module) slsExists(ctx context.Context, c *modules.Call) (any, error) {
	_, high, errs, err := m.renderMods(ctx, c)
	if err != nil {
		return nil, err
	}
	return len(errs) == 0 && high.Len() > 0, nil
}

func (m *module) compileHighstate(ctx context.Context, c *modules.Call) (*job, *ordered.Map, []string, error) {
	j, err := m.newJob(ctx, c.Env, c.Kwargs, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(j.pillarErrors(c.Kwargs)) > 0 {
		return nil, nil, nil, errPillar(c.Env)
	}
	hs := j.highstate()
	top, err := hs.GetTop(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	errs := compile.VerifyTops(top)
	matches, err := hs.TopMatches(top)
	if err != nil {
		return nil, nil, nil, err
	}
	high, rerrs := hs.RenderHighstate(ctx, matches)
	return j, high, append(errs, rerrs...), nil
}

// showHighstate returns the highstate's high data (compile_highstate).
func (m *module) showHighstate(ctx context.Context, c *modules.Call) (any, error) {
	_, high, errs, err := m.compileHighstate(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		setRetcode(c.Env, exCompilerError)
		return strList(errs), nil
	}
	stateRetcode(c.Env, high)
	return high, nil
}

// showLowstate returns the highstate's low chunks with extend, *_in and
// exclude applied (compile_low_chunks).
func (m *module) showLowstate(ctx context.Context, c *modules.Call) (any, error) {
	_, high, errs, err := m.compileHighstate(ctx, c)
	if err != nil {
		return nil, err
	}
	errs = append(errs, compile.ReconcileExtend(high, false)...)
	errs = append(errs, compile.VerifyHigh(high)...)
	errs = append(errs, compile.RequisiteIn(high)...)
	compile.ApplyExclude(high)
	if len(errs) > 0 {
		return strList(errs), nil
	}
	return chunksList(compile.CompileHigh(high)), nil
}

// showTop returns the SLS names the top file gives this minion.
func (m *module) showTop(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(ctx, c.Env, c.Kwargs, nil)
	if err != nil {
		return nil, err
	}
	if len(j.pillarErrors(c.Kwargs)) > 0 {
		return nil, errPillar(c.Env)
	}
	matches, errs, err := j.topMatches(ctx)
	if err != nil || errs != nil {
		return errs, err
	}
	return matches.Map(), nil
}

// topMatches is get_top, verify_tops and top_matches; a top file with
// errors gives their list (retcode 1) instead of matches.
func (j *job) topMatches(ctx context.Context) (*compile.Matches, any, error) {
	hs := j.highstate()
	top, err := hs.GetTop(ctx)
	if err != nil {
		return nil, nil, err
	}
	if errs := compile.VerifyTops(top); len(errs) > 0 {
		setRetcode(j.env, exCompilerError)
		return nil, strList(errs), nil
	}
	matches, err := hs.TopMatches(top)
	return matches, nil, err
}
