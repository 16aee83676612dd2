package eauth

import (
	"testing"

	"github.com/brinesalt/brine/internal/saltyaml"
)

// FuzzExternalAuth is an external_auth section as an operator writes it
// (YAML), parsed and then evaluated for a publish, a runner and a wheel
// call: nothing may panic, and an empty configuration allows nothing.
func FuzzExternalAuth(f *testing.F) {
	for _, s := range []string{
		sampleAuth,
		"auto:\n  alice: [test.*, '@jobs', {'web*': [{test.echo: {args: [a, null], kwargs: {k: v}}}]}]\n",
		"file:\n  ^filename: /x\n  '*': ['@wheel', {'@runner': [jobs.*]}, {'@key': [{list_all: [{args: 5}]}]}]\n",
		"pam:\n  bob: [{'G@os:Debian': test.ping}, {}, {a: 1, b: 2}, [x], 7, null]\n",
		"x: [1]\n", "[a]\n", "{}\n", "pam:\n  '[': ['[', '(?P<x>', '\\\\']\n",
	} {
		f.Add(s, "alice", "test.ping", "jobs.active")
	}
	f.Fuzz(func(t *testing.T, src, user, fun, spec string) {
		v, err := saltyaml.Load([]byte(src), "fuzz")
		if err != nil {
			return
		}
		ea, _, err := ParseExternalAuth(v)
		if err != nil {
			return
		}
		for _, b := range ea.Backends {
			l := FillAuthList(b, user, []string{"admins"}, false)
			_ = FillAuthList(b, user, nil, true)
			_ = Perms(b, user, []string{"admins"})
			p := Publish{Funs: []string{fun}, Args: [][]any{{"a", int64(1)}}, Tgt: "*", TgtType: "glob", Minions: []string{"web1"}}
			_ = AuthCheck(l, p, nil, fakeTargets)
			_, _ = SpecCheck(l, spec, nil, "runner")
			_, _ = SpecCheck(l, spec, nil, "wheel")
		}
		empty := Publish{Funs: []string{fun}, Minions: []string{"web1"}}
		if AuthCheck(nil, empty, nil, fakeTargets) {
			t.Fatal("an empty ACL allowed a publish")
		}
	})
}
