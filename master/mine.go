package master

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/minedata"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/target"
)

func (m *Master) minePath(id string) string {
	return filepath.Join(m.o.CacheDir, "minions", id, "mine.p")
}

// mineCache reports whether mine data is kept: Salt's masterapi stores
// it only with minion_data_cache (default True) or enforce_mine_cache.
func (m *Master) mineCache() bool {
	v, ok := m.o.Raw.Get("minion_data_cache")
	return !ok || modules.Truthy(v) || modules.Truthy(m.o.Raw.Value("enforce_mine_cache"))
}

// loadMine reads a minion's mine bank; a missing or unreadable file is
// an empty mine, as salt.cache localfs fetch returns {}.
func (m *Master) loadMine(id string) *ordered.Map {
	b, err := os.ReadFile(m.minePath(id))
	if err != nil {
		return ordered.New()
	}
	v, err := protocol.Unmarshal(b)
	if mm, ok := v.(*ordered.Map); err == nil && ok {
		return mm
	}
	return ordered.New()
}

func (m *Master) storeMine(id string, data *ordered.Map) bool {
	b, err := protocol.Marshal(data)
	if err != nil {
		return false
	}
	path := m.minePath(id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false
	}
	if err := crypt.WriteFileReplace(path, b, 0o600); err != nil {
		m.log.Warn("mine cache", "id", id, logattr.Err, err)
		return false
	}
	return true
}

// changeMine runs fn on a minion's mine bank under the lock, for a
// valid load from an accepted minion; without the mine cache the
// change is acknowledged and dropped, as Salt's masterapi does.
func (m *Master) changeMine(id string, valid bool, fn func() any) any {
	if !valid || !pki.ValidID(m.o.PKIDir, id) {
		return false
	}
	if !m.mineCache() {
		return true
	}
	m.mineMu.Lock()
	defer m.mineMu.Unlock()
	return fn()
}

// onMine is masterapi._mine (salt/daemons/masterapi.py): the sent data
// updates the minion's mine. With clear, Salt's code reaches the store
// with an unbound variable and the request fails; Brine replaces the
// mine with the sent data, which is what clear asks for.
func (m *Master) onMine(id string, load *ordered.Map) any {
	data, ok := load.Value("data").(*ordered.Map)
	return m.changeMine(id, ok, func() any {
		cur := data
		if !modules.Truthy(load.Value("clear")) {
			cur = m.loadMine(id)
			for _, k := range data.Keys() {
				cur.Set(k, data.Value(k))
			}
		}
		m.storeMine(id, cur)
		return true
	})
}

// onMineDelete is masterapi._mine_delete: drop one function.
func (m *Master) onMineDelete(id string, load *ordered.Map) any {
	fun, ok := load.Get("fun")
	return m.changeMine(id, ok, func() any {
		cur := m.loadMine(id)
		if cur.Has(fun) {
			cur.Delete(fun)
			return m.storeMine(id, cur)
		}
		return true
	})
}

// onMineFlush is masterapi._mine_flush: drop the whole mine; like
// salt/cache/localfs.py flush it answers False when there was none.
func (m *Master) onMineFlush(id string) any {
	return m.changeMine(id, true, func() any {
		return os.Remove(m.minePath(id)) == nil
	})
}

// onMineGet is masterapi._mine_get: fun is one function, a
// comma-separated string of them or a list; the answer is
// {minion: value} for one function and {function: {minion: value}}
// for several. The master's mine_get ACL ({id regex: [fun regex]}) and
// each entry's minion-side allow_tgt ACL apply. pillar and compound
// targets match exactly (pillar_exact), as Salt does here.
func (m *Master) onMineGet(id string, load *ordered.Map) any {
	empty := ordered.New()
	tgt, okT := load.Get("tgt")
	funs, multi, okF := minedata.Funcs(load.Value("fun"))
	if !okT || !okF || !pki.ValidID(m.o.PKIDir, id) {
		return empty
	}
	if funs = m.mineAllowed(id, funs); len(funs) == 0 {
		return empty
	}
	kind := mineKind(load)
	ids, err := m.CheckMinions(tgt, kind, ":")
	if err != nil {
		return empty
	}
	ret := ordered.New()
	for _, minion := range ids {
		mine := m.loadMine(minion)
		for _, fun := range funs {
			if v, ok := m.mineValue(mine, fun, id); ok {
				minedata.Add(ret, multi, minion, fun, v)
			}
		}
	}
	return ret
}

// mineValue is one function's mine entry, unwrapped, unless its
// allow_tgt ACL leaves out the requesting minion. An allow_tgt that
// matches no minion withholds the entry (Salt's "continue").
func (m *Master) mineValue(mine *ordered.Map, fun, requester string) (any, bool) {
	v, ok := mine.Get(fun)
	if !ok {
		return nil, false
	}
	data, acl := minedata.Unwrap(v)
	if acl == nil {
		return data, true
	}
	if allow, ok := acl.Get("allow_tgt"); ok {
		kindName, _ := acl.Value("allow_tgt_type").(string)
		kind, err := target.ParseKind(cmp.Or(kindName, "glob"))
		if err != nil {
			return nil, false
		}
		allowed, err := m.CheckMinions(allow, kind, ":")
		if err != nil || len(allowed) == 0 || !slices.Contains(allowed, requester) {
			return nil, false
		}
	}
	return data, true
}

// mineAllowed applies the master's mine_get ACL: without one every
// function is allowed; with one, the function patterns of every id
// pattern matching the requester (both re.match: anchored at the start).
func (m *Master) mineAllowed(id string, funs []string) []string {
	acl, ok := m.o.Raw.Get("mine_get")
	if !ok {
		return funs
	}
	am, isMap := acl.(*ordered.Map)
	if !isMap {
		return nil
	}
	var perms []*regexp.Regexp
	for _, k := range am.Keys() {
		pat, _ := k.(string)
		if re, err := regexp.Compile("^(?:" + pat + ")"); err != nil || !re.MatchString(id) {
			continue
		}
		list, _ := am.Value(k).([]any)
		for _, p := range list {
			if s, ok := p.(string); ok {
				if re, err := regexp.Compile("^(?:" + s + ")"); err == nil {
					perms = append(perms, re)
				}
			}
		}
	}
	var out []string
	for _, f := range funs {
		for _, re := range perms {
			if re.MatchString(f) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// mineKind is the target type of a _mine_get: tgt_type, else the old
// expr_form, else glob; pillar and compound become their exact forms.
func mineKind(load *ordered.Map) target.Kind {
	name, ok := load.Value("tgt_type").(string)
	if !ok {
		if ef, isStr := load.Value("expr_form").(string); isStr {
			name = ef
		}
	}
	switch strings.ToLower(name) {
	case "pillar":
		name = "pillar_exact"
	case "compound":
		name = "compound_pillar_exact"
	}
	k, err := target.ParseKind(cmp.Or(name, "glob"))
	if err != nil {
		return target.Glob
	}
	return k
}
