package master

import (
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestJobFilter(t *testing.T) {
	job := func(fun string, tgt any, md *ordered.Map) *ordered.Map {
		j := ordered.FromPairs("Function", fun, "Target", tgt)
		if md != nil {
			j.Set("Metadata", md)
		}
		return j
	}
	jobs := map[string]*ordered.Map{
		"20260101100000000000": job("state.apply", "web*", ordered.FromPairs("team", "a")),
		"20260102100000000000": job("test.ping", []any{"db1", "db2"}, nil),
		"20260103100000000000": job("runner.jobs.list_jobs", "vm_master", nil),
	}
	for _, tc := range []struct {
		kw   *ordered.Map
		want string
	}{
		{ordered.New(), "123"},
		{ordered.FromPairs("search_function", "test.*,state.*"), "12"},
		{ordered.FromPairs("search_function", []any{"runner.*"}), "3"},
		{ordered.FromPairs("search_target", "db?"), "2"},
		{ordered.FromPairs("search_metadata", ordered.FromPairs("team", "a")), "1"},
		{ordered.FromPairs("search_metadata", "team"), ""},
		{ordered.FromPairs("start_time", "2026-01-02", "end_time", "2026-01-02 23:59"), "2"},
		{ordered.FromPairs("search_function", "*", "search_target", "web*"), "1"},
	} {
		f, err := parseJobFilter(tc.kw)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for i, jid := range []string{"20260101100000000000", "20260102100000000000", "20260103100000000000"} {
			if f.match(jid, jobs[jid]) {
				got += string(rune('1' + i))
			}
		}
		if got != tc.want {
			t.Errorf("%v: matched %q, want %q", tc.kw, got, tc.want)
		}
	}
	for _, bad := range []*ordered.Map{ordered.FromPairs("nosuch", 1), ordered.FromPairs("ext_source", "mysql"),
		ordered.FromPairs("start_time", "yesterday"), ordered.FromPairs("display_progress", true)} {
		if _, err := parseJobFilter(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
