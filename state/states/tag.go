package states

import "github.com/brinesalt/brine/internal/ordered"

// Tag is the key of a state's return, `state_|-id_|-name_|-fun`
// (salt/state.py _gen_tag), with values printed as Python's str().
func Tag(low *ordered.Map) string {
	s := func(k string) string { return ordered.KeyString(low.Value(k)) }
	return s("state") + "_|-" + s("__id__") + "_|-" + s("name") + "_|-" + s("fun")
}
