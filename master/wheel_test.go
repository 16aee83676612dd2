package master

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/py"
)

// addKey puts a fresh public key for id under state.
func addKey(t *testing.T, m *Master, state, id string) {
	t.Helper()
	k, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	p := m.pki.Path(state, id)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, crypt.EncodePublicKey(&k.PublicKey), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wheelData calls a wheel function over the socket as root and returns
// the answer's data.
func wheelData(t *testing.T, c *Client, fun string, kv ...any) *ordered.Map {
	t.Helper()
	ret, err := c.Call(t.Context(), "wheel", CallRequest{Fun: fun, Kwarg: ordered.FromPairs(kv...)})
	if err != nil {
		t.Fatalf("wheel %s: %v", fun, err)
	}
	r := ret.(*ordered.Map)
	data := r.Value("data").(*ordered.Map)
	if r.Value("tag") != "salt/wheel/"+data.Value("jid").(string) || data.Value("fun") != "wheel."+fun {
		t.Errorf("wheel %s answer %v", fun, r)
	}
	return data
}

func wheelReturn(t *testing.T, c *Client, fun string, kv ...any) string {
	t.Helper()
	return py.Repr(wheelData(t, c, fun, kv...).Value("return"))
}

func TestWheelKeys(t *testing.T) {
	m, c, _ := startEauthMaster(t, "{}")
	for _, id := range []string{"web1", "web2", "db1"} {
		addKey(t, m, pki.Pending, id)
	}
	addKey(t, m, pki.Rejected, "web3")
	for _, tc := range []struct {
		fun  string
		kv   []any
		want string
	}{
		{"key.list", []any{"match", "pre"}, "{'minions_pre': ['db1', 'web1', 'web2']}"},
		{"key.accept", []any{"match", "web*"}, "{'minions': ['web1', 'web2'], 'minions_rejected': ['web3']}"},
		{"key.accept", []any{"match", "web3", "include_rejected", true}, "{'minions': ['web3']}"},
		{"key.reject", []any{"match", "web1"}, "{'minions': ['web1']}"}, // accepted keys stay without include_accepted
		{"key.reject", []any{"match", "web1", "include_accepted", true}, "{'minions_rejected': ['web1']}"},
		{"key.accept_dict", []any{"match", ordered.FromPairs("minions_pre", []any{"db1"})}, "{'minions': ['db1']}"},
		{"key.delete", []any{"match", "web1"}, "{}"},
		{"key.delete_dict", []any{"match", ordered.FromPairs("minions", []any{"web3"})}, "{}"},
		{"key.list", []any{"match", "acc"}, "{'minions': ['db1', 'web2']}"},
		{"key.name_match", []any{"match", []any{"db*", "web2"}}, "{'minions': ['db1', 'web2']}"},
	} {
		if got := wheelReturn(t, c, tc.fun, tc.kv...); got != tc.want {
			t.Errorf("%s %v = %s, want %s", tc.fun, tc.kv, got, tc.want)
		}
	}
	all := wheelData(t, c, "key.list_all").Value("return").(*ordered.Map)
	if got := py.Repr(all); got != "{'minions': ['db1', 'web2'], 'minions_pre': [], 'minions_rejected': [], 'minions_denied': [], 'local': ['master.pem', 'master.pub']}" {
		t.Errorf("list_all = %s", got)
	}
	fp := py.Repr(wheelData(t, c, "key.finger", "match", "db1").Value("return"))
	if !strings.HasPrefix(fp, "{'minions': {'db1': '") || strings.Count(fp, ":") < 30 {
		t.Errorf("finger = %s", fp)
	}
	pr := wheelData(t, c, "key.print", "match", "db1").Value("return").(*ordered.Map)
	if !strings.Contains(ordered.KeyString(pr.Value("minions").(*ordered.Map).Value("db1")), "BEGIN PUBLIC KEY") {
		t.Errorf("print = %v", pr)
	}
	data := wheelData(t, c, "key.accept")
	if data.Value("success") != false || !strings.Contains(data.Value("return").(string), "Exception occurred in wheel key.accept: accept takes at least 1 argument (0 given)") {
		t.Errorf("accept without match = %v", data)
	}
}

func TestWheelGenAccept(t *testing.T) {
	m, c, _ := startEauthMaster(t, "{}")
	ret := wheelData(t, c, "key.gen_accept", "id_", "new_1", "keysize", "2048").Value("return").(*ordered.Map)
	if got := py.Repr(ret.Keys()); got != "['priv', 'pub']" {
		t.Fatalf("gen_accept keys = %s", got)
	}
	priv, err := crypt.ParsePrivateKey([]byte(ret.Value("priv").(string)), "")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := crypt.LoadPublicKey(m.pki.Path(pki.Accepted, "new1")) // clean.id drops the _
	if err != nil {
		t.Fatal(err)
	}
	if !stored.Equal(&priv.PublicKey) {
		t.Error("the accepted key is not the returned pair's")
	}
	if got := wheelReturn(t, c, "key.gen_accept", "id_", "new1"); got != "{}" {
		t.Errorf("gen_accept of an accepted id = %s, want {}", got)
	}
	forced := wheelData(t, c, "key.gen_accept", "id_", "new1", "force", true).Value("return").(*ordered.Map)
	if forced.Value("pub") == ret.Value("pub") {
		t.Error("force did not replace the key")
	}
	gen := wheelData(t, c, "key.gen").Value("return").(*ordered.Map)
	if !strings.Contains(gen.Value("priv").(string), "BEGIN RSA PRIVATE KEY") {
		t.Errorf("gen = %v", gen)
	}
	if got := wheelReturn(t, c, "key.list", "match", "acc"); got != "{'minions': ['new1']}" {
		t.Errorf("after gen: %s (key.gen keeps nothing)", got)
	}
}

// A wheel call fires new and ret with Salt's data, answers the ret
// data and is stored in the job cache.
func TestWheelEventsAndJob(t *testing.T) {
	m, c, ctx := startEauthMaster(t, "external_auth: {auto: {alice: ['@wheel']}}")
	ch, cancel := m.Bus().Subscribe()
	defer cancel()
	data := wheelData(t, c, "config.values")
	jid := data.Value("jid").(string)
	if got := py.Repr(data.Keys()); got != "['fun', 'jid', 'tag', 'user', 'return', 'success', '_stamp']" {
		t.Errorf("data keys = %s", got)
	}
	if v := data.Value("return").(*ordered.Map); v.Value("external_auth") == nil || v.Value("worker_threads") != int64(5) && v.Value("worker_threads") != 5 {
		t.Errorf("config.values = %v", v)
	}
	want := map[string]string{"new": "['fun', 'jid', 'tag', 'user', '_stamp']", "ret": "['fun', 'jid', 'tag', 'user', 'return', 'success', '_stamp']"}
	timeout := time.After(5 * time.Second)
	for len(want) > 0 {
		select {
		case ev := <-ch:
			for k, keys := range want {
				if ev.Tag == "salt/wheel/"+jid+"/"+k {
					if got := py.Repr(ev.Data.Keys()); got != keys {
						t.Errorf("%s keys = %s, want %s", ev.Tag, got, keys)
					}
					if k == "ret" && ev.Data.Value("_stamp") != data.Value("_stamp") {
						t.Errorf("ret _stamp %v, answer %v", ev.Data.Value("_stamp"), data.Value("_stamp"))
					}
					delete(want, k)
				}
			}
		case <-timeout:
			t.Fatalf("events missing: %v", want)
		}
	}
	job, err := c.Runner(ctx, "jobs.list_job", []any{jid}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := job.(*ordered.Map).Value("Function"); f != "wheel.config.values" {
		t.Errorf("jobs.list_job = %v", job)
	}
}
