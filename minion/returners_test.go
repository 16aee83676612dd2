package minion

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/returners"
)

func TestReturnerHook(t *testing.T) {
	for _, tc := range []struct {
		name, ret string
		own       any
		want      []string
	}{
		{"job only", "a,b,a", nil, []string{"a", "b"}},
		{"minion option string", "a", "b,c", []string{"a", "b", "c"}},
		{"minion option list", "", []any{"c", "a"}, []string{"c", "a"}},
		{"none", "", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := returners.NewRegistry()
			var got []string
			var loads []*ordered.Map
			for _, n := range []string{"a", "b", "c"} {
				reg.Register(n, func(_ context.Context, env *modules.Env, ret *ordered.Map) error {
					got = append(got, n)
					loads = append(loads, ret)
					return nil
				})
			}
			m := &Minion{o: Options{Returners: reg}, opts: ordered.New(), log: slog.New(slog.DiscardHandler)}
			if tc.own != nil {
				m.opts.Set("return", tc.own)
			}
			kw := ordered.FromPairs("ret_config", "alt", "ret_kwargs", ordered.FromPairs("x", 1))
			job := &protocol.Job{JID: "1", Fun: "test.ping", Ret: tc.ret, Kwargs: kw}
			m.sendToReturners(context.Background(), job, &protocol.Return{ID: "m1", JID: "1", Fun: "test.ping", Return: true, Success: true})
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatal(d)
			}
			for _, l := range loads {
				if d := cmp.Diff([]any{"success", "return", "retcode", "jid", "fun", "fun_args", "ret_config", "ret_kwargs", "id"}, l.Keys()); d != "" {
					t.Errorf("ret keys: %s", d)
				}
			}
		})
	}
}
