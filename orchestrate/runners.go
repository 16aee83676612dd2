package orchestrate

import (
	"context"
	"fmt"
	"log/slog"
	"os/user"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/state/apply"
	"github.com/brinesalt/brine/state/modules"
)

// Config is what the orchestration runners need besides the master: the
// master's loaded config (file_roots, pillar_roots, the roster settings
// salt-ssh reads) and its directory.
type Config struct {
	Master    *config.Master
	ConfigDir string
	Log       *slog.Logger
}

// Runners are the orchestration runner functions by Salt's names, for
// master.Options.Runners.
func Runners(c Config) map[string]master.RunnerFunc {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	o := &orchestrator{cfg: c}
	return map[string]master.RunnerFunc{
		"state.orchestrate": o.orchestrate, "state.orch": o.orchestrate, "state.sls": o.orchestrate,
		"state.orchestrate_single": o.single, "state.orchestrate_high": o.high,
		"state.orchestrate_show_sls": o.showSLS, "state.orch_show_sls": o.showSLS,
	}
}

// orchestrator holds the runners' configuration and the master
// minion's grains, gathered once on first use and shared by every run:
// they describe the master's host, and gathering them (systemctl, /proc,
// netlink) would otherwise cost every orchestration tens of
// milliseconds.
type orchestrator struct {
	cfg    Config
	grains master.MinionGrains
}

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

// The runners' signatures (salt/runners/state.py).
var (
	orchFn = &modules.Function{Name: "state.orchestrate", Spec: modules.Spec{Params: []modules.Param{
		{Name: "mods"}, opt("saltenv", "base"), opt("test", nil), opt("exclude", nil), opt("pillar", nil),
		opt("pillarenv", nil), opt("pillar_enc", nil), opt("orchestration_jid", nil)}}}
	singleFn = &modules.Function{Name: "state.orchestrate_single", Spec: modules.Spec{Params: []modules.Param{
		{Name: "fun"}, {Name: "name"}, opt("test", nil), opt("queue", false), opt("pillar", nil)}, VarKw: true}}
	highFn = &modules.Function{Name: "state.orchestrate_high", Spec: modules.Spec{Params: []modules.Param{
		{Name: "data"}, opt("test", nil), opt("queue", false), opt("pillar", nil)}, VarKw: true}}
	showFn = &modules.Function{Name: "state.orchestrate_show_sls", Spec: modules.Spec{Params: []modules.Param{
		{Name: "mods"}, opt("saltenv", "base"), opt("test", nil), opt("queue", false), opt("pillar", nil),
		opt("pillarenv", nil), opt("pillar_enc", nil)}}}
)

// bind matches the runner's arguments to its signature. They arrive
// typed: salt-run reads its command line through parse_input as
// salt/runner.py does, and salt-api, the reactor and salt.runner pass
// what they were given.
func bind(f *modules.Function, args []any, kw *ordered.Map) (*modules.Call, error) {
	return f.Bind(nil, args, kw)
}

func pillarArg(c *modules.Call) (*ordered.Map, error) {
	switch p := c.Arg("pillar").(type) {
	case nil:
		return nil, nil
	case *ordered.Map:
		return p, nil
	}
	// The SaltInvocationError salt/runners/state.py raises.
	return nil, modules.Invalidf("Pillar data must be formatted as a dictionary")
}

// notSupported refuses pillar_enc: Brine has no gpg renderer to decrypt
// the pillar with.
func notSupported(c *modules.Call) error {
	if c.Arg("pillar_enc") != nil {
		return fmt.Errorf("pillar_enc is not supported by Brine's orchestrate runner")
	}
	return nil
}

// onMaster binds a runner's arguments to f, refuses a pillar that is not
// a mapping and pillar_enc, and runs the state function plan names on the
// master minion, under the orchestration_jid argument when given, else
// the runner job's jid.
func (o *orchestrator) onMaster(ctx context.Context, m *master.Master, f *modules.Function, args []any, kw *ordered.Map,
	plan func(c *modules.Call, pillar *ordered.Map) (string, []any, *ordered.Map)) (*run, any, error) {
	c, err := bind(f, args, kw)
	if err != nil {
		return nil, nil, err
	}
	pillar, err := pillarArg(c)
	if err != nil {
		return nil, nil, err
	}
	if err := notSupported(c); err != nil {
		return nil, nil, err
	}
	jid, _ := c.Arg("orchestration_jid").(string)
	if jid == "" {
		jid = master.RunJID(ctx)
	}
	r := o.newRun(ctx, m, jid)
	fun, fargs, fkw := plan(c, pillar)
	running, err := r.env.Run(ctx, fun, fargs, fkw)
	return r, running, err
}

// orchestrate is state.orchestrate: state.sls on the master minion, its
// return wrapped as {"data": {<id>_master: ...}, "outputter":
// "highstate", "retcode": 0 or 1}.
func (o *orchestrator) orchestrate(ctx context.Context, m *master.Master, args []any, kw *ordered.Map) (any, error) {
	r, running, err := o.onMaster(ctx, m, orchFn, args, kw, func(c *modules.Call, pillar *ordered.Map) (string, []any, *ordered.Map) {
		saltenv := c.Arg("saltenv")
		if saltenv == nil {
			saltenv = "base"
		}
		return "state.sls", []any{c.Arg("mods"), c.Arg("test"), c.Arg("exclude")}, ordered.FromPairs("pillar", pillar,
			"saltenv", saltenv, "pillarenv", c.Arg("pillarenv"))
	})
	if err != nil {
		return nil, err
	}
	data := ordered.FromPairs(r.id, running)
	rc := 1
	if apply.CheckResult(data, false) {
		rc = 0
	}
	return ordered.FromPairs("data", data, "outputter", "highstate", "retcode", rc), nil
}

// withPillar is the runner's extra keywords with pillar set when given.
func withPillar(c *modules.Call, pillar *ordered.Map) *ordered.Map {
	kw := c.Kwargs.Copy()
	if pillar != nil {
		kw.Set("pillar", pillar)
	}
	return kw
}

// single is state.orchestrate_single: state.single on the master
// minion, answered as {<id>_master: ...}, with the progress event
// salt/run/<jid>/progress carrying {"data", "outputter": "highstate"}.
// salt/runners/state.py passes test=None: the master's test option
// decides, not the caller's test= (Salt's behaviour, kept).
func (o *orchestrator) single(ctx context.Context, m *master.Master, args []any, kw *ordered.Map) (any, error) {
	r, running, err := o.onMaster(ctx, m, singleFn, args, kw, func(c *modules.Call, pillar *ordered.Map) (string, []any, *ordered.Map) {
		return "state.single", []any{c.Arg("fun"), c.Arg("name"), nil, false}, withPillar(c, pillar)
	})
	if err != nil {
		return nil, err
	}
	return r.progress(ordered.FromPairs(r.id, running)), nil
}

// high is state.orchestrate_high: state.high on the master minion, with
// test=None as orchestrate_single.
func (o *orchestrator) high(ctx context.Context, m *master.Master, args []any, kw *ordered.Map) (any, error) {
	r, running, err := o.onMaster(ctx, m, highFn, args, kw, func(c *modules.Call, pillar *ordered.Map) (string, []any, *ordered.Map) {
		return "state.high", []any{c.Arg("data"), nil, false}, withPillar(c, pillar)
	})
	if err != nil {
		return nil, err
	}
	return r.progress(ordered.FromPairs(r.id, running)), nil
}

// showSLS is state.orchestrate_show_sls: state.show_sls on the master
// minion, {<id>_master: high data}.
func (o *orchestrator) showSLS(ctx context.Context, m *master.Master, args []any, kw *ordered.Map) (any, error) {
	r, running, err := o.onMaster(ctx, m, showFn, args, kw, func(c *modules.Call, pillar *ordered.Map) (string, []any, *ordered.Map) {
		return "state.show_sls", []any{c.Arg("mods"), c.Arg("test"), c.Arg("queue")},
			ordered.FromPairs("pillar", pillar, "pillarenv", c.Arg("pillarenv"), "saltenv", c.Arg("saltenv"))
	})
	if err != nil {
		return nil, err
	}
	return ordered.FromPairs(r.id, running), nil
}

// localUser is who the master minion's jobs are published as: Salt's
// LocalClient uses salt.utils.user.get_specific_user, the master's user.
func localUser() string {
	u, err := user.Current()
	if err != nil {
		return "root"
	}
	return u.Username
}
