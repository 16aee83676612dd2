package orchestrate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/states"
)

func TestBind(t *testing.T) {
	c, err := bind(orchFn, []any{"orch.deploy"}, ordered.FromPairs("test", true, "pillar", ordered.FromPairs("a", 1), "saltenv", "dev"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := pillarArg(c)
	if err != nil || c.Arg("test") != true || c.Arg("saltenv") != "dev" || p.Value("a") != 1 {
		t.Errorf("bound %v, pillar %v %v", c.Args, p, err)
	}
	// Arguments arrive typed (salt-run parses its command line): a
	// pillar given as text is refused, as salt/runners/state.py refuses it.
	for _, p := range []any{[]any{1, 2}, `{"a": 1}`} {
		c, _ = bind(orchFn, []any{"x"}, ordered.FromPairs("pillar", p))
		if _, err := pillarArg(c); err == nil || err.Error() != "Pillar data must be formatted as a dictionary" {
			t.Errorf("pillar %#v: %v", p, err)
		}
	}
	c, _ = bind(orchFn, []any{"x"}, ordered.FromPairs("pillar_enc", "gpg"))
	if notSupported(c) == nil {
		t.Error("pillar_enc accepted")
	}
	if _, err := bind(orchFn, nil, ordered.New()); err == nil {
		t.Error("no mods accepted")
	}
}

func TestRunnerArgs(t *testing.T) {
	args, kw := runnerArgs(ordered.FromPairs("arg", []any{"a"}, "kwarg", ordered.FromPairs("k", 1), "mods", "orch.x"))
	if diff := cmp.Diff([]any{"a"}, args); diff != "" {
		t.Error(diff)
	}
	if kw.Value("k") != 1 || kw.Value("mods") != "orch.x" || kw.Has("arg") || kw.Has("kwarg") {
		t.Errorf("kwargs %v", kw)
	}
}

func TestFailMinions(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want map[string]bool
		warn bool
	}{
		{nil, map[string]bool{}, false},
		{"web1, web2", map[string]bool{"web1": true, "web2": true}, false},
		{[]any{"db1"}, map[string]bool{"db1": true}, false},
		{7, map[string]bool{}, true},
	} {
		res := states.NewResult("x", states.True, "")
		got := failMinions(res, tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" || (len(res.Warnings) > 0) != tc.warn {
			t.Errorf("%v: %s warnings %v", tc.in, diff, res.Warnings)
		}
	}
}

func TestPubArgs(t *testing.T) {
	q := &cmdRequest{arg: []any{"tier"}, kwarg: ordered.FromPairs("test", true)}
	got := q.pubArgs()
	if len(got) != 2 || got[0] != "tier" || ordered.KeyString(got[1]) != ordered.KeyString(ordered.FromPairs("__kwarg__", true, "test", true)) {
		t.Errorf("pubArgs %v", got)
	}
	if got := (&cmdRequest{kwarg: ordered.New()}).pubArgs(); len(got) != 0 {
		t.Errorf("no arguments: %v", got)
	}
}

// FuzzBind feeds the runner's argument binding what salt-run and
// salt-api hand it from users: it must answer a call or an error.
func FuzzBind(f *testing.F) {
	for _, s := range []string{"orch.deploy", "pillar={a: 1}", "test=True", "{", "[1,", "saltenv=", "!!binary x", "- a\n- b"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, pos, val string) {
		if c, err := bind(orchFn, []any{pos}, ordered.FromPairs("pillar", val, "test", val)); err == nil {
			_, _ = pillarArg(c)
		}
		if c, err := bind(highFn, []any{val}, ordered.FromPairs("x", pos)); err == nil {
			_, _ = pillarArg(c)
		}
	})
}
