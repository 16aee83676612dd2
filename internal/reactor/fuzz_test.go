package reactor

import (
	"log/slog"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/compile"
)

// FuzzReactorConfig feeds YAML as the reactor option and as a rendered
// reaction SLS: the map parses or fails cleanly, and every chunk the
// compiler makes of it becomes a call or an error, never a panic.
func FuzzReactorConfig(f *testing.F) {
	for _, s := range []string{
		"- 'salt/auth': /srv/reactor/a.sls\n- 'x/*': [a, b]\n",
		"accept:\n  wheel.key.accept:\n    - args:\n      - match: web1\n",
		"x:\n  local.state.apply:\n    - tgt: '*'\n    - arg: [a]\n    - kwarg: {b: 1}\n",
		"x: local.test.ping\n",
		"x:\n  caller.file.touch:\n    - args: [/tmp/x, {a: 1}]\n",
		"x:\n  runner.jobs.list_jobs:\n    - args: {a: [1, 2]}\n",
		"- {a: b, c: d}\n- 3\n",
	} {
		f.Add(s)
	}
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, src string) {
		v, err := saltyaml.Load([]byte(src), "fuzz.sls")
		if err != nil {
			return
		}
		if entries, err := ParseMap(v); err == nil {
			Match(entries, "salt/minion/x/start")
		}
		high, ok := v.(*ordered.Map)
		if !ok {
			return
		}
		compile.PadFuncs(high)
		if len(compile.VerifyHigh(high)) > 0 {
			return
		}
		for _, c := range compile.CompileHigh(high) {
			if call, err := NewCall(c, log); err == nil && call.Kind == "local" {
				call.PublishArgs()
			}
		}
	})
}
