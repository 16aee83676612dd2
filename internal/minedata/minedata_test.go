package minedata

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestFuncs(t *testing.T) {
	for _, tc := range []struct {
		in    any
		funs  []string
		multi bool
		ok    bool
	}{
		{"network.ip_addrs", []string{"network.ip_addrs"}, false, true},
		{"a,b,a", []string{"a", "b"}, true, true},
		{[]any{"a"}, []string{"a"}, true, true},
		{7, nil, false, false},
	} {
		funs, multi, ok := Funcs(tc.in)
		if diff := cmp.Diff(tc.funs, funs); diff != "" || multi != tc.multi || ok != tc.ok {
			t.Errorf("Funcs(%v) = %v %v %v; %s", tc.in, funs, multi, ok, diff)
		}
	}
}

func TestWrapUnwrap(t *testing.T) {
	w := WrapACL([]any{"10.0.0.1"}, ordered.FromPairs("allow_tgt", "web*"))
	if got := ordered.KeyString(w.Keys()[1]); got != "__saltmine_acl__" || w.Value("__saltmine_acl__") != 1 {
		t.Fatalf("wrapped as %v", w)
	}
	data, acl := Unwrap(w)
	if diff := cmp.Diff([]any{"10.0.0.1"}, data); diff != "" || acl.Value("allow_tgt") != "web*" {
		t.Errorf("Unwrap: %s, acl %v", diff, acl)
	}
	plain := ordered.FromPairs("k", 1)
	if data, acl := Unwrap(plain); data != plain || acl != nil {
		t.Errorf("an unwrapped mapping came back as %v, %v", data, acl)
	}
}

func TestAdd(t *testing.T) {
	single, multi := ordered.New(), ordered.New()
	for _, id := range []string{"m1", "m2"} {
		Add(single, false, id, "f", id+"-v")
		Add(multi, true, id, "f", id+"-v")
	}
	if single.Value("m2") != "m2-v" || single.Len() != 2 {
		t.Errorf("single = %v", single)
	}
	per, _ := multi.Value("f").(*ordered.Map)
	if multi.Len() != 1 || per.Value("m1") != "m1-v" || per.Len() != 2 {
		t.Errorf("multi = %v", multi)
	}
}
