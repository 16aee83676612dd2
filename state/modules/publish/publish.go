// Package publish is Salt's publish execution module
// (salt/modules/publish.py): a minion publishes a job to other minions,
// or runs a runner, through its master, which allows it only as its
// peer and peer_run options say and otherwise answers {}.
package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/modules"
)

// pollInterval is _publish's loop_interval between pub_ret requests.
const pollInterval = 300 * time.Millisecond

func init() {
	p := func(name string, def any) modules.Param {
		return modules.Param{Name: name, Default: def, Optional: true}
	}
	pubParams := []modules.Param{{Name: "tgt"}, {Name: "fun"}, p("arg", nil), p("tgt_type", "glob"), p("returner", ""), p("timeout", 5)}
	modules.Register(modules.Function{Name: "publish.publish",
		Doc:  "Publish a command from this minion to the minions tgt matches, as the master's peer ACL allows; their returns by minion.",
		Spec: modules.Spec{Params: append(append([]modules.Param{}, pubParams...), p("via_master", nil))},
		Fn:   func(ctx context.Context, c *modules.Call) (any, error) { return publish(ctx, c, "clean") }})
	modules.Register(modules.Function{Name: "publish.full_data",
		Doc:  "publish.publish returning the full return data of each minion ({minion: {ret, out}}).",
		Spec: modules.Spec{Params: pubParams},
		Fn:   func(ctx context.Context, c *modules.Call) (any, error) { return publish(ctx, c, "full") }})
	modules.Register(modules.Function{Name: "publish.runner",
		Doc:  "Run a runner on the master, as its peer_run ACL allows, and return its data.",
		Spec: modules.Spec{Params: []modules.Param{{Name: "fun"}, p("arg", nil), p("timeout", 5)}}, Fn: runner})
}

// parseArgs is _parse_args: the YAML-loaded arg as a list.
func parseArgs(arg any) []any {
	if s, ok := arg.(string); ok {
		arg = saltyaml.ParseCLIArg(s)
	}
	switch x := arg.(type) {
	case nil:
		return []any{}
	case []any:
		return x
	}
	return []any{arg}
}

func noParse(env *modules.Env) []any {
	if l, ok := env.Opts.Value("no_parse").([]any); ok {
		return l
	}
	return []any{}
}

func timeoutOf(c *modules.Call) time.Duration {
	switch v := c.Arg("timeout").(type) {
	case int:
		return time.Duration(v) * time.Second
	case float64:
		return time.Duration(v * float64(time.Second))
	case string:
		var f float64
		if _, err := fmt.Sscan(v, &f); err == nil {
			return time.Duration(f * float64(time.Second))
		}
	}
	return 5 * time.Second
}

func publish(ctx context.Context, c *modules.Call, form string) (any, error) {
	env := c.Env
	ch, err := env.Master()
	if err != nil {
		env.Log.Error("Cannot run publish commands without a connection to a salt master. No command sent.")
		return ordered.New(), nil
	}
	fun := c.Str("fun")
	if strings.HasPrefix(fun, "publish.") {
		env.Log.Info("Cannot publish publish calls. Returning {}")
		return ordered.New(), nil
	}
	if v := c.Arg("via_master"); v != nil {
		return nil, modules.Invalidf("via_master is not supported by Brine's minion: publications go to the master it is connected to")
	}
	id, _ := env.Opts.Value("id").(string)
	timeout := timeoutOf(c)
	load := ordered.FromPairs("cmd", "minion_pub", "fun", fun, "arg", parseArgs(c.Arg("arg")), "tgt", c.Arg("tgt"),
		"tgt_type", c.Str("tgt_type"), "ret", c.Str("returner"), "tmo", c.Arg("timeout"), "form", form, "id", id,
		"no_parse", noParse(env))
	v, err := ch.MasterRequest(ctx, load)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("'%s' publish timed out", fun), nil
	}
	if err != nil {
		return nil, modules.Errorf("publish %s: %s", fun, err.Error())
	}
	peer, ok := v.(*ordered.Map)
	if !ok || peer.Len() == 0 {
		return ordered.New(), nil
	}
	matched := map[string]bool{}
	if l, ok := peer.Value("minions").([]any); ok {
		for _, x := range l {
			matched[ordered.KeyString(x)] = true
		}
	}
	return wait(ctx, ch, id, peer.Value("jid"), matched, timeout, form)
}

// wait polls pub_ret until every matched minion returned or timeout
// passed (_publish with wait=True).
func wait(ctx context.Context, ch modules.MasterChannel, id string, jid any, matched map[string]bool, timeout time.Duration, form string) (any, error) {
	for loops := 0; ; loops++ {
		v, err := ch.MasterRequest(ctx, ordered.FromPairs("cmd", "pub_ret", "id", id, "jid", jid))
		if err != nil {
			return nil, modules.Errorf("publish: %s", err.Error())
		}
		ret, _ := v.(*ordered.Map)
		if ret == nil {
			ret = ordered.New()
		}
		all := true
		for mn := range matched {
			if !ret.Has(mn) {
				all = false
			}
		}
		if all || time.Duration(loops)*pollInterval > timeout {
			if !all && ret.Len() == 0 {
				return ordered.New(), nil
			}
			if form != "clean" {
				return ret, nil
			}
			clean := ordered.New()
			ret.Range(func(k, v any) bool {
				r, _ := v.(*ordered.Map)
				clean.Set(k, r.Value("ret"))
				return true
			})
			return clean, nil
		}
		t := time.NewTimer(pollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, modules.Errorf("publish: %s", ctx.Err().Error())
		case <-t.C:
		}
	}
}

func runner(ctx context.Context, c *modules.Call) (any, error) {
	env := c.Env
	ch, err := env.Master()
	if err != nil {
		return "No access to master. If using salt-call with --local, please remove.", nil
	}
	fun := c.Str("fun")
	id, _ := env.Opts.Value("id").(string)
	load := ordered.FromPairs("cmd", "minion_runner", "fun", fun, "arg", parseArgs(c.Arg("arg")), "tmo", c.Arg("timeout"),
		"id", id, "no_parse", noParse(env))
	v, err := ch.MasterRequest(ctx, load)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("'%s' runner publish timed out", fun), nil
	}
	if err != nil {
		return nil, modules.Errorf("publish.runner %s: %s", fun, err.Error())
	}
	return v, nil
}
