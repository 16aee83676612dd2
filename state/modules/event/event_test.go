package event

import (
	"context"
	"log/slog"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// minion is a running minion's bus and master channel.
type minion struct {
	local, master []string
}

func (m *minion) FireLocal(tag string, data *ordered.Map) bool {
	m.local = append(m.local, tag+" "+py.Repr(data))
	return true
}

func (m *minion) MasterRequest(_ context.Context, load *ordered.Map) (any, error) {
	m.master = append(m.master, py.Repr(load))
	return true, nil
}

func (*minion) RefreshPillar(context.Context) error { return nil }
func (*minion) RefreshGrains(context.Context) error { return nil }

func TestFireAndSend(t *testing.T) {
	m := &minion{}
	opts := ordered.FromPairs("id", "web1")
	env := (&modules.Env{Opts: opts, Registry: modules.Default, Minion: m, Log: slog.New(slog.DiscardHandler),
		Pillar: ordered.FromPairs("role", "web", "secret", "x")}).WithGrains(ordered.FromPairs("id", "web1", "os", "Debian"))
	call := func(fun string, args []any, kw *ordered.Map) any {
		t.Helper()
		out, err := env.Run(t.Context(), fun, args, kw)
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		return out
	}
	if call("event.fire", []any{`{"a": 1}`, "my/tag"}, nil) != true || call("event.fire", []any{"not a dict", "my/tag"}, nil) != false {
		t.Error("event.fire answers")
	}
	call("event.send", []any{"app/up"}, ordered.FromPairs("with_grains", []any{"os"}, "with_pillar", []any{"role"}, "x", 1,
		"data", ordered.FromPairs("x", 2)))
	call("event.fire_master", []any{ordered.FromPairs("b", true), "up/tag"}, nil)
	want := []string{
		"{'id': 'web1', 'tag': 'app/up', 'data': {'grains': {'os': 'Debian'}, 'pillar': {'role': 'web'}, 'x': 2}, 'cmd': '_minion_event'}",
		"{'id': 'web1', 'tag': 'up/tag', 'data': {'b': True}, 'cmd': '_minion_event'}",
	}
	if py.Repr(m.master) != py.Repr(want) || len(m.local) != 1 || m.local[0] != "my/tag {'a': 1}" {
		t.Errorf("master %v\nlocal %v", m.master, m.local)
	}
	// Masterless, send fires on the local bus and fire_master refuses.
	opts.Set("file_client", "local")
	m.local, m.master = nil, nil
	if call("event.send", []any{"app/local"}, nil) != true || call("event.fire_master", []any{ordered.New(), "t"}, nil) != false {
		t.Error("masterless answers")
	}
	if len(m.master) != 0 || len(m.local) != 1 || m.local[0] != "app/local {}" {
		t.Errorf("masterless: master %v, local %v", m.master, m.local)
	}
	// Without a minion (salt-call beside none) there is no bus.
	env.Minion = nil
	if call("event.fire", []any{ordered.New(), "t"}, nil) != false {
		t.Error("event.fire without a minion")
	}
}
