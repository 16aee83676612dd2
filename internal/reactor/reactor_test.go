package reactor

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/google/go-cmp/cmp"
)

func yamlValue(t *testing.T, src string) any {
	t.Helper()
	v, err := saltyaml.Load([]byte(src), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseMapAndMatch(t *testing.T) {
	v := yamlValue(t, `
- 'salt/minion/*/start':
  - /srv/reactor/start.sls
  - /srv/reactor/mine.sls
- 'salt/auth': /srv/reactor/auth.sls
- not-a-mapping
- {a: x, b: y}
- 'salt/netapi/hook/deploy/[!x]*': salt://reactor/deploy.sls
`)
	entries, err := ParseMap(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tag  string
		want []string
	}{
		{"salt/minion/web1/start", []string{"/srv/reactor/start.sls", "/srv/reactor/mine.sls"}},
		{"salt/minion/a/b/start", []string{"/srv/reactor/start.sls", "/srv/reactor/mine.sls"}},
		{"salt/auth", []string{"/srv/reactor/auth.sls"}},
		{"salt/auth/x", nil},
		{"salt/netapi/hook/deploy/app", []string{"salt://reactor/deploy.sls"}},
		{"salt/netapi/hook/deploy/xapp", nil},
	} {
		if d := cmp.Diff(tc.want, Match(entries, tc.tag)); d != "" {
			t.Errorf("Match(%q): %s", tc.tag, d)
		}
	}
	r := New(Options{Map: entries})
	want := `[{'salt/minion/*/start': ['/srv/reactor/start.sls', '/srv/reactor/mine.sls']}, {'salt/auth': '/srv/reactor/auth.sls'}, {'salt/netapi/hook/deploy/[!x]*': 'salt://reactor/deploy.sls'}]`
	if got := py.Repr(r.List()); got != want {
		t.Errorf("List = %s\nwant %s", got, want)
	}
	if got := flow(t, r.Add("salt/auth", []string{"x.sls"})); got != "{status: false, comment: Reactor already exists.}" {
		t.Errorf("Add existing = %s", got)
	}
	if got := flow(t, r.Add("new/*", []string{"x.sls"})); got != "{status: true, comment: Reactor added.}" {
		t.Errorf("Add = %s", got)
	}
	if got := flow(t, r.Delete("salt/auth")); got != "{status: true, comment: Reactor deleted.}" {
		t.Errorf("Delete = %s", got)
	}
	if got := flow(t, r.Delete("salt/auth")); got != "{status: false, comment: Reactor does not exists.}" {
		t.Errorf("Delete missing = %s", got)
	}
	if _, err := ParseMap("/nonexistent/reactor.conf"); err == nil || !strings.Contains(err.Error(), "/nonexistent/reactor.conf") {
		t.Errorf("missing map file: %v", err)
	}
	if _, err := ParseMap(ordered.New()); err == nil {
		t.Error("a mapping is not a reactor map")
	}
}

func flow(t *testing.T, v any) string {
	t.Helper()
	s, err := saltyaml.FilterYAML(v, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// chunks renders one reactor SLS for an event the way the reactor does.
func chunks(t *testing.T, sls, tag string, data *ordered.Map) ([]*Call, string) {
	t.Helper()
	dir := t.TempDir()
	fn := filepath.Join(dir, "r.sls")
	if err := os.WriteFile(fn, []byte(sls), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	r := New(Options{Log: log})
	var calls []*Call
	for _, c := range r.rend.reactions(context.Background(), tag, data, []string{fn}) {
		call, err := NewCall(c, log)
		if err != nil {
			logs.WriteString("call error: " + err.Error() + "\n")
			continue
		}
		call.SLS = ""
		calls = append(calls, call)
	}
	return calls, logs.String()
}

func TestReactionArguments(t *testing.T) {
	data := ordered.FromPairs("id", "web1", "act", "pend")
	for _, tc := range []struct {
		name, sls string
		want      []string // flow YAML of each call's kind, fun, tgt, tgt_type, arg, kwarg
	}{
		{"new style local", `
apply:
  local.state.apply:
    - tgt: {{ data['id'] }}
    - args:
      - mods: web
      - pillar: {tag: '{{ tag }}'}
`, []string{`['local', 'state.apply', 'web1', 'glob', [], {'mods': 'web', 'pillar': {'tag': 'salt/minion/web1/start'}}, [{'__kwarg__': True, 'mods': 'web', 'pillar': {'tag': 'salt/minion/web1/start'}}]]`}},
		{"old style local", `
ping:
  cmd.cmd.run:
    - tgt: 'G@os:Debian'
    - tgt_type: compound
    - arg: [uptime]
    - kwarg: {timeout: 5}
`, []string{`['local', 'cmd.run', 'G@os:Debian', 'compound', ['uptime'], {'timeout': 5}, ['uptime', {'__kwarg__': True, 'timeout': 5}]]`}},
		{"expr_form", `
ping:
  local.test.ping:
    - tgt: [a, b]
    - expr_form: list
`, []string{`['local', 'test.ping', ['a', 'b'], 'list', [], {}, []]`}},
		{"new style wheel", `
accept:
  wheel.key.accept:
    - args:
      - match: {{ data['id'] }}
`, []string{`['wheel', 'key.accept', None, 'glob', [], {'match': 'web1'}, []]`}},
		{"old style runner", `
orch:
  runner.state.orchestrate:
    - mods: orch.deploy
    - pillar: {id: {{ data['id'] }}}
`, []string{`['runner', 'state.orchestrate', None, 'glob', [], {'mods': 'orch.deploy', 'pillar': {'id': 'web1'}}, []]`}},
		{"legacy caller list", `
touch:
  caller.file.touch:
    - args: [/tmp/x]
`, []string{`['caller', 'file.touch', None, 'glob', ['/tmp/x'], {}, []]`}},
		{"sorted as Salt's Compiler.order_chunks", `
first:
  runner.jobs.list_jobs: []
second:
  local.test.ping:
    - tgt: '*'
`, []string{`['local', 'test.ping', '*', 'glob', [], {}, []]`, `['runner', 'jobs.list_jobs', None, 'glob', [], {}, []]`}},
		{"conditional empty", `
{% if data['act'] == 'accept' %}
never:
  wheel.key.accept:
    - match: x
{% endif %}
`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, logs := chunks(t, tc.sls, "salt/minion/web1/start", data)
			var got []string
			for _, c := range calls {
				pub := []any{}
				if c.Kind == "local" {
					pub = c.PublishArgs()
				}
				got = append(got, py.Repr([]any{c.Kind, c.Fun, c.Tgt, c.TgtType, orEmpty(c.Arg), c.Kwarg, pub}))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				for _, g := range got {
					t.Logf("got %s", g)
				}
				t.Errorf("calls (-want +got):\n%s\nlogs: %s", d, logs)
			}
		})
	}
}

func orEmpty(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

func TestReactionFaults(t *testing.T) {
	data := ordered.FromPairs("id", "web1")
	for _, tc := range []struct{ name, sls, log string }{
		{"bad args", "x:\n  local.test.ping:\n    - tgt: '*'\n    - args: [[1]]\n", "incorrect argument format"},
		{"no tgt", "x:\n  local.test.ping:\n    - arg: [1]\n", "local takes at least 2 arguments"},
		{"bad jinja", "x: {{ data['nope'] }\n", "Failed to render"},
		{"undefined", "x:\n  local.test.ping:\n    - tgt: {{ data.missing.deeper }}\n", "Failed to render"},
		{"not a dict", "- a\n- b\n", "does not render to a dictionary"},
		{"bad high", "x:\n  local.test.ping: notalist\n", "Unable to render reactions for event salt/test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, logs := chunks(t, tc.sls, "salt/test", data)
			if len(calls) != 0 || !strings.Contains(logs, tc.log) {
				t.Errorf("calls %d, logs %q; want none and %q", len(calls), logs, tc.log)
			}
			if strings.Contains(tc.log, "render") && !strings.Contains(logs, "tag=salt/test") {
				t.Errorf("the log does not name the tag: %s", logs)
			}
		})
	}
	var logs bytes.Buffer
	r := New(Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if got := r.rend.reactions(context.Background(), "salt/x", data, []string{"/nonexistent/r.sls"}); got != nil {
		t.Errorf("missing file rendered %v", got)
	}
	if !strings.Contains(logs.String(), "Can not render SLS /nonexistent/r.sls for tag salt/x. File missing or not found.") {
		t.Errorf("missing file log: %s", logs.String())
	}
}

// recorder is an Executor that records the calls and can hold them.
type recorder struct {
	mu    sync.Mutex
	calls []string
	hold  chan struct{}
}

func (r *recorder) React(_ context.Context, c *Call) error {
	if r.hold != nil {
		<-r.hold
	}
	r.mu.Lock()
	r.calls = append(r.calls, c.Kind+" "+c.Fun+" "+ordered.KeyString(c.Tgt))
	r.mu.Unlock()
	return nil
}

func TestPoolQueuesAndDrops(t *testing.T) {
	dir := t.TempDir()
	fn := filepath.Join(dir, "ping.sls")
	os.WriteFile(fn, []byte("ping:\n  local.test.ping:\n    - tgt: {{ data['id'] }}\n"), 0o600)
	rec := &recorder{hold: make(chan struct{})}
	var logs bytes.Buffer
	r := New(Options{Map: []Entry{{Tag: "t/*", SLS: []string{fn}}}, Workers: 2, HWM: 3, Exec: rec,
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	r.Start(ctx)
	// Two events are taken by the two held workers; three fill the
	// queue; the rest are refused without blocking.
	kept := 0
	for i := range 10 {
		if r.Submit("t/"+string(rune('a'+i)), ordered.FromPairs("id", string(rune('a'+i)))) {
			kept++
		}
		if i < 2 {
			waitFor(t, func() bool { return len(r.queue) == 0 })
		}
	}
	if r.Submit("other", nil) || r.Submit("t/self", ordered.FromPairs("user", EventUser)) {
		t.Error("an unmatched tag or the reactor's own event was queued")
	}
	close(rec.hold)
	waitFor(t, func() bool { return r.Stats().Done == int64(kept) })
	cancel()
	r.Wait()
	st := r.Stats()
	if kept != 5 || st.Matched != 10 || st.Queued != 5 || st.Dropped != 5 || st.Reactions != 5 {
		t.Errorf("kept %d, stats %+v; want 5 kept, 10 matched, 5 dropped", kept, st)
	}
	if len(rec.calls) != 5 || !strings.Contains(logs.String(), "TaskPool queue is full!") {
		t.Errorf("calls %v; log %s", rec.calls, logs.String())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 5000 {
		if cond() {
			return
		}
		runtimeGosched()
	}
	t.Fatal("condition never held")
}

// funcs is a SaltCaller for the templates: test.echo answers its
// argument, anything else fails.
type funcs struct{}

func (funcs) Call(_ context.Context, fun string, args []any, _ *ordered.Map) (any, error) {
	if fun == "test.echo" && len(args) == 1 {
		return args[0], nil
	}
	return nil, errors.New("'" + fun + "' is not available.")
}

func TestTemplateSaltAndGrains(t *testing.T) {
	dir := t.TempDir()
	fn := filepath.Join(dir, "r.sls")
	os.WriteFile(fn, []byte(`echo:
  local.test.arg:
    - tgt: {{ grains['id'] }}
    - arg: [{{ salt['test.echo'](data['id']) }}]
`), 0o600)
	var logs bytes.Buffer
	r := New(Options{Log: slog.New(slog.NewTextHandler(&logs, nil)), Salt: funcs{},
		Grains: func() *ordered.Map { return ordered.FromPairs("id", "master_minion") }})
	got := r.rend.reactions(context.Background(), "t", ordered.FromPairs("id", "web1"), []string{fn})
	if len(got) != 1 {
		t.Fatalf("chunks %v; logs %s", got, logs.String())
	}
	call, err := NewCall(got[0], r.log)
	if err != nil {
		t.Fatal(err)
	}
	if s := py.Repr([]any{call.Tgt, call.Arg}); s != "['master_minion', ['web1']]" {
		t.Errorf("tgt and arg = %s", s)
	}
	os.WriteFile(fn, []byte("x:\n  local.test.arg:\n    - tgt: {{ salt['nope.nothing']() }}\n"), 0o600)
	if got := r.rend.reactions(context.Background(), "t", nil, []string{fn}); got != nil || !strings.Contains(logs.String(), "nope.nothing") {
		t.Errorf("a failing salt call rendered %v; logs %s", got, logs.String())
	}
	// Without Salt, salt is undefined, as before the master minion had
	// functions.
	r = New(Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	os.WriteFile(fn, []byte("x:\n  local.test.arg:\n    - tgt: {{ salt['test.echo']('a') }}\n"), 0o600)
	if got := r.rend.reactions(context.Background(), "t", nil, []string{fn}); got != nil {
		t.Errorf("salt without functions rendered %v", got)
	}
}
