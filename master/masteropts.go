package master

import (
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/modules"
)

// masterOptDefaults are the options a _master_opts reply carries after
// file_roots, in Salt's order, with the defaults of DEFAULT_MASTER_OPTS
// (salt/config/__init__.py). The first three are sent even for env_only.
var masterOptDefaults = []struct {
	key string
	def func() any
}{
	{"top_file_merging_strategy", func() any { return "merge" }},
	{"env_order", func() any { return []any{} }},
	{"default_top", func() any { return "base" }},
	{"renderer", func() any { return "jinja|yaml" }},
	{"failhard", func() any { return false }},
	{"state_top", func() any { return "top.sls" }},
	{"state_top_saltenv", func() any { return nil }},
	{"nodegroups", func() any { return ordered.New() }},
	{"state_auto_order", func() any { return true }},
	{"state_events", func() any { return false }},
	{"state_aggregate", func() any { return false }},
	{"jinja_env", func() any { return ordered.New() }},
	{"jinja_sls_env", func() any { return ordered.New() }},
	{"jinja_lstrip_blocks", func() any { return false }},
	{"jinja_trim_blocks", func() any { return false }},
}

// masterOpts answers a minion's _master_opts request as AESFuncs
// ._master_opts in salt/master.py does: file_roots names every
// environment with an empty list (the master's paths stay private), then
// the options a minion's HighState takes from its master
// (BaseHighState.__gen_opts in salt/state.py reads renderer and
// state_top without a default, so a reply without them breaks a Salt
// minion's state.apply). With env_only only the first four are sent.
func (m *Master) masterOpts(load *ordered.Map) *ordered.Map {
	roots := ordered.New()
	for _, env := range fileclient.New(m.o.FileRoots, nil).Envs() {
		roots.Set(env, []any{})
	}
	out := ordered.FromPairs("file_roots", roots)
	envOnly := modules.Truthy(load.Value("env_only"))
	for i, o := range masterOptDefaults {
		if envOnly && i == 3 {
			break
		}
		v, ok := m.o.Raw.Get(o.key)
		if !ok {
			v = o.def()
		}
		out.Set(o.key, v)
	}
	return out
}
