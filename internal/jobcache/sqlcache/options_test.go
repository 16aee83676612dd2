package sqlcache

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
)

func TestOptions(t *testing.T) {
	cfg := ordered.FromPairs(
		"mysql.host", "db1", "mysql.pass", "s1", "returner.mysql.port", 3307,
		"alternative.mysql.host", "db2", "alternative.mysql", ordered.FromPairs("db", "altdb"),
		"returner.pgjsonb", ordered.FromPairs("host", "pg1", "sslmode", "verify-full"), "pgjsonb.user", "pguser",
	)
	get := func(k string) any { return cfg.Value(k) }
	tests := []struct {
		name, returner string
		ret            *ordered.Map
		want           map[string]any
	}{
		{"mysql flat keys, a returner.mysql alias and Salt's defaults", "mysql", nil,
			map[string]any{"host": "db1", "pass": "s1", "port": 3307, "user": "salt", "db": "salt"}},
		{"--return_config alternative", "mysql", ordered.FromPairs("ret_config", "alternative"),
			map[string]any{"host": "db2", "pass": "s1", "port": 3307, "user": "salt", "db": "altdb"}},
		{"--return_kwargs win", "mysql", ordered.FromPairs("ret_kwargs", ordered.FromPairs("db", "kw")),
			map[string]any{"host": "db1", "pass": "s1", "port": 3307, "user": "salt", "db": "kw"}},
		{"pgjsonb nested returner.pgjsonb and the pgjsonb.* alias", "pgjsonb", nil,
			map[string]any{"host": "pg1", "sslmode": "verify-full", "user": "pguser", "pass": "salt", "db": "salt", "port": 5432}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Options(tc.returner, get, tc.ret)); d != "" {
				t.Error(d)
			}
		})
	}
	if _, _, err := (mysqlDialect{}).open(map[string]any{"port": "nope"}); err == nil {
		t.Error("a port that is not a number was accepted")
	}
	if strOpt(map[string]any{"ssl_ca": "None"}, "ssl_ca") != "" {
		t.Error("'None' is not unset")
	}
	if !jobcache.IsJID(jobcache.NewJID(true)) || jobcache.IsJID("2026120102030412345x") {
		t.Error("unique_jid jids are not jids")
	}
}

// TestEncodeReturn: full_ret with the return spliced in is json.dumps
// of the whole dict.
func TestEncodeReturn(t *testing.T) {
	ret := ordered.FromPairs("id", "m1", "return", ordered.FromPairs("a", []any{1, "é"}), "success", true, "fun_args", []any{})
	rtext, full, err := encodeReturn(ret)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := encode(ret)
	if full != want || rtext != `{"a": [1, "\u00e9"]}` {
		t.Errorf("full = %s\nwant %s\nreturn = %s", full, want, rtext)
	}
}
