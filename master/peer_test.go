package master

import (
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/transport"
)

// TestPeerPublish sends the publish module's loads as minions would:
// the peer ACL's plain and {target: [functions]} forms, refusals as {},
// and pub_ret serving only the minion that published the job.
func TestPeerPublish(t *testing.T) {
	m, ctx := startMaster(t)
	m.o.Raw.Set("peer", ordered.FromPairs("web.*", []any{ordered.FromPairs("m*", []any{"test.*"})}, "m1", []any{"test.ping"}))
	m.o.Raw.Set("peer_run", ordered.FromPairs("m1", []any{"manage.versions"}))
	ask := map[string]func(*ordered.Map) any{}
	for _, id := range []string{"m1", "m2", "web1"} {
		req := &transport.Req{Addr: m.RetAddr().String()}
		defer req.Close()
		ask[id] = asker(t, ctx, req, id)
	}
	pub := func(who, tgt, fun string) *ordered.Map {
		t.Helper()
		r, _ := ask[who](ordered.FromPairs("cmd", "minion_pub", "id", who, "tgt", tgt, "fun", fun, "arg", []any{"x", "k=v"},
			"tgt_type", "glob", "ret", "", "tmo", 5)).(*ordered.Map)
		return r
	}
	for _, tc := range []struct {
		who, tgt, fun string
		allowed       bool
	}{
		{"web1", "m*", "test.echo", true},
		{"web1", "*", "test.echo", false}, // web1 itself is outside m*
		{"web1", "m1", "cmd.run", false},
		{"web1", "m1", "publish.publish", false},
		{"m1", "m2", "test.ping", true},
		{"m1", "m2", "test.echo", false},
		{"m2", "m1", "test.ping", false},
	} {
		r := pub(tc.who, tc.tgt, tc.fun)
		if got := r.Len() > 0; got != tc.allowed {
			t.Errorf("%s publishing %s to %s: %s", tc.who, tc.fun, tc.tgt, py.Repr(r))
		}
	}
	r := pub("web1", "m*", "test.arg")
	jid, _ := r.Value("jid").(string)
	if py.Repr(r.Value("minions")) != "['m1', 'm2']" || jid == "" {
		t.Fatalf("minion_pub = %s", py.Repr(r))
	}
	load, err := m.store().GetLoad(ctx, jid)
	if err != nil || py.Repr(load.Value("arg")) != "['x', {'__kwarg__': True, 'k': 'v'}]" {
		t.Errorf("published arguments %s (%v)", py.Repr(load.Value("arg")), err)
	}
	if got := ask["m1"](ordered.FromPairs("cmd", "_return", "id", "m1", "jid", jid, "fun", "test.arg", "return", "done", "retcode", 0, "success", true)); got != true {
		t.Fatalf("_return = %v", got)
	}
	ret := func(who string) string {
		return py.Repr(ask[who](ordered.FromPairs("cmd", "pub_ret", "id", who, "jid", jid)))
	}
	if got := ret("web1"); got != "{'m1': {'ret': 'done'}}" {
		t.Errorf("pub_ret by the publisher = %s", got)
	}
	if got := ret("m2"); got != "{}" {
		t.Errorf("pub_ret by another minion = %s", got)
	}
	if got := py.Repr(ask["m2"](ordered.FromPairs("cmd", "minion_pub", "id", "m1", "tgt", "m2", "fun", "test.ping", "arg", []any{}, "ret", ""))); got != "{}" {
		t.Errorf("a load naming another minion = %s", got)
	}
	run := func(who, fun string) string {
		return py.Repr(ask[who](ordered.FromPairs("cmd", "minion_runner", "id", who, "fun", fun, "arg", []any{})))
	}
	if got := run("m1", "manage.versions"); got == "{}" {
		t.Errorf("minion_runner allowed = %s", got)
	}
	if got := run("m2", "manage.versions"); got != "{}" {
		t.Errorf("minion_runner refused = %s", got)
	}
	// peer_run patterns match at the start, as re.match does.
	if got := run("m1", "manage.versionsx"); got != `"'manage.versionsx' is not available."` {
		t.Errorf("minion_runner of a missing runner = %s", got)
	}
}
