// Package minedata is what the master's mine and the masterless minion's
// mine share (salt/utils/mine.py and the answer of _mine_get): the ACL
// wrapping of a stored entry, the functions a mine.get asks for, and the
// shape of its answer.
package minedata

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// Entries stored with an allow_tgt ACL are wrapped as
// {__data__: value, __saltmine_acl__: 1, allow_tgt, allow_tgt_type}.
const (
	aclID      = "__saltmine_acl__"
	aclVersion = 1
	aclData    = "__data__"
)

// WrapACL is salt.utils.mine.wrap_acl_structure: data wrapped with the
// allow_tgt and allow_tgt_type keys of acl.
func WrapACL(data any, acl *ordered.Map) *ordered.Map {
	out := ordered.FromPairs(aclData, data, aclID, aclVersion)
	acl.Range(func(k, v any) bool { out.Set(k, v); return true })
	return out
}

// Unwrap is a stored entry's data; acl is the wrapping mapping (holding
// allow_tgt and allow_tgt_type) when the entry was stored with one, else nil.
func Unwrap(v any) (data any, acl *ordered.Map) {
	if m, ok := v.(*ordered.Map); ok && m.Has(aclID) {
		return m.Value(aclData), m
	}
	return v, nil
}

// Funcs splits the functions a mine.get asks for: "a,b" (duplicates
// dropped) or a list. multi is Salt's _ret_dict: the answer is keyed by
// function, then minion, instead of by minion alone. ok is false for any
// other type.
func Funcs(v any) (funs []string, multi, ok bool) {
	switch x := v.(type) {
	case string:
		seen := map[string]bool{}
		for _, f := range strings.Split(x, ",") {
			if !seen[f] {
				seen[f] = true
				funs = append(funs, f)
			}
		}
		return funs, len(funs) > 1, true
	case []any:
		for _, f := range x {
			funs = append(funs, ordered.KeyString(f))
		}
		return funs, true, true
	}
	return nil, false, false
}

// Add puts one minion's value for fun into a mine.get answer: ret[minion]
// for a single function, ret[fun][minion] when multi.
func Add(ret *ordered.Map, multi bool, minion, fun string, v any) {
	if !multi {
		ret.Set(minion, v)
		return
	}
	per, _ := ret.Value(fun).(*ordered.Map)
	if per == nil {
		per = ordered.New()
		ret.Set(fun, per)
	}
	per.Set(minion, v)
}
