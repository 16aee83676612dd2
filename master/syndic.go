package master

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/target"
)

// The upper master's half of a syndic tree (order_masters: True): the
// returns a syndic relays in _syndic_return, the events it forwards
// with a pretag, the minion lists of its lower master and the
// cachedir/syndics/<id> markers (salt/master.py AESFuncs._syndic_return
// and _handle_minion_event, salt/daemons/masterapi.py _minion_event).

// syndicDir is Salt's syndic_dir, cachedir/syndics.
func (o Options) syndicDir() string { return filepath.Join(o.CacheDir, "syndics") }

// onSyndicReturn is AESFuncs._syndic_return: each entry of the batch
// ({id, jid, fun, arg, tgt, tgt_type, load, return: {minion: {...}}})
// saves the job's load when it carries one, registers the syndic and
// becomes one _return per minion. Brine refuses what Salt would take: a
// batch on a master without order_masters, and entries whose id is not
// the syndic that signed the request (a minion cannot relay returns in
// another syndic's name).
func (m *Master) onSyndicReturn(ctx context.Context, sender string, load *ordered.Map) any {
	if !m.o.OrderMasters {
		m.log.Warn("_syndic_return refused: this master does not have order_masters: True", "id", sender)
		return false
	}
	entries, ok := load.Value("load").([]any)
	if !ok {
		// Old syndics sent one entry, not a list.
		entries = []any{load}
	}
	for _, e := range entries {
		entry, ok := e.(*ordered.Map)
		if !ok || !entry.Has("return") || !entry.Has("jid") || !entry.Has("id") {
			continue
		}
		if id, _ := entry.Value("id").(string); id != sender {
			m.log.Warn("_syndic_return entry in another syndic's name dropped", "id", sender, "entry_id", id)
			continue
		}
		m.syndicEntry(ctx, sender, entry)
	}
	return true
}

// syndicEntry handles one entry of a _syndic_return batch.
func (m *Master) syndicEntry(ctx context.Context, syndic string, entry *ordered.Map) {
	jid, _ := entry.Value("jid").(string)
	if jl, ok := entry.Value("load").(*ordered.Map); ok && jl.Len() > 0 && jid != "" {
		// local_cache.save_load(jid, load) without minions recomputes
		// them with check_minions on this master (salt/returners/local_cache.py).
		kind, _ := target.ParseKind(stringOr(jl.Value("tgt_type"), "glob"))
		minions, err := m.CheckMinions(jl.Value("tgt"), kind, stringOr(jl.Value("delimiter"), ""))
		if err != nil {
			minions = nil
		}
		m.saveJobLoad(ctx, jid, jl, minions)
	}
	m.markSyndic(syndic)
	rets, _ := entry.Value("return").(*ordered.Map)
	rets.Range(func(k, v any) bool {
		item, ok := v.(*ordered.Map)
		if !ok {
			return true
		}
		ret := ordered.FromPairs("cmd", protocol.CmdReturn, "jid", jid, "id", ordered.KeyString(k))
		item.Range(func(ik, iv any) bool { ret.Set(ik, iv); return true })
		for _, key := range []string{"master_id", "fun", "fun_args", "out", "sig"} {
			if v, ok := entry.Get(key); ok && v != nil {
				ret.Set(key, v)
			}
		}
		m.onReturn(ctx, ret)
		return true
	})
}

// noteSelfReturn records that id sent a _return of its own: a syndic
// that does is also a minion of this master (Syndics).
func (m *Master) noteSelfReturn(id string) {
	if m.o.OrderMasters {
		m.selfReturns.Store(id, true)
	}
}

func stringOr(v any, def string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}

// markSyndic writes the empty cachedir/syndics/<id> marker once, which
// tells the CLI an id is a syndic rather than a minion that did not
// return.
func (m *Master) markSyndic(id string) {
	dir := m.o.syndicDir()
	if !pki.ValidID(dir, id) {
		return
	}
	path := filepath.Join(dir, id)
	if _, err := os.Stat(path); err == nil {
		return
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		m.log.Warn("register syndic", "id", id, logattr.Err, err)
		return
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		m.log.Warn("register syndic", "id", id, logattr.Err, err)
	}
}

// Syndics are the accepted ids registered as syndics (a marker in
// cachedir/syndics), and of them the relays: the syndics not seen to be
// also a minion of this master (a minion running with the syndic's id
// and key, as Salt's docs suggest for the syndic node), so not expected
// to return for themselves. A syndic is a minion once it has sent a
// _return of its own since this master started; cached minion data
// does not tell, since Salt's syndic fetches its pillar (and so leaves
// grains and pillar in the minion data cache) like any minion. Salt's
// CLI likewise never reports a registered syndic as not returned.
func (m *Master) Syndics() (all, relays []string) {
	ents, err := os.ReadDir(m.o.syndicDir())
	if err != nil {
		return nil, nil
	}
	accepted := m.Accepted()
	for _, e := range ents {
		id := e.Name()
		if e.IsDir() || !slices.Contains(accepted, id) {
			continue
		}
		all = append(all, id)
		if _, minion := m.selfReturns.Load(id); !minion {
			relays = append(relays, id)
		}
	}
	return all, relays
}

// storeSyndicMinions is AESFuncs._handle_minion_event: an event with
// minions and a jid (a lower master's salt/job/<jid>/new) stores that
// syndic's minion list of the job, .minions.<syndic id>.p.
func (m *Master) storeSyndicMinions(ctx context.Context, syndic string, e *ordered.Map) {
	data, _ := e.Value("data").(*ordered.Map)
	if data == nil || !data.Has("minions") {
		return
	}
	jid, _ := data.Value("jid").(string)
	if jid == "" {
		return
	}
	st, ok := m.store().(jobcache.MinionSaver)
	if !ok {
		m.log.Debug("master_job_cache cannot store a syndic's minions", "returner", m.store().Name(), logattr.JID, jid)
		return
	}
	if err := st.SaveMinions(ctx, jid, stringList(data.Value("minions")), syndic); err != nil && !errors.Is(err, fs.ErrNotExist) {
		m.log.Error("Could not add minion(s) for job", logattr.JID, jid, "id", syndic, logattr.Err, err)
	}
}

// pretagged is salt.utils.event.tagify(tag, base=pretag).
func pretagged(pretag, tag string) string {
	return strings.Trim(pretag, "/") + "/" + tag
}

// syndicInfo is what the master knows of its syndics; without
// order_masters, nothing.
func (m *Master) syndicInfo() SyndicInfo {
	if !m.o.OrderMasters {
		return SyndicInfo{}
	}
	all, relays := m.Syndics()
	return SyndicInfo{OrderMasters: true, SyndicWait: m.o.SyndicWait.Seconds(), Syndics: all, Relays: relays}
}

// syndicsReply answers the local socket's "syndics" command.
func (m *Master) syndicsReply() *ordered.Map {
	i := m.syndicInfo()
	return ordered.FromPairs("order_masters", i.OrderMasters, "syndic_wait", i.SyndicWait,
		"syndics", strList(i.Syndics), "relays", strList(i.Relays))
}

// SyndicInfo is what the master knows of its syndics, for a client
// collecting a job's returns (client.Session).
type SyndicInfo struct {
	OrderMasters bool
	SyndicWait   float64 // seconds
	Syndics      []string
	Relays       []string
}

// Syndics asks the master which of its ids are syndics.
func (c *Client) Syndics(ctx context.Context) (SyndicInfo, error) {
	resp, err := c.call(ctx, ordered.FromPairs("cmd", "syndics"))
	if err != nil {
		return SyndicInfo{}, err
	}
	var s SyndicInfo
	s.OrderMasters, _ = resp.Value("order_masters").(bool)
	s.SyndicWait, _ = ordered.Number(resp.Value("syndic_wait"))
	s.Syndics = stringList(resp.Value("syndics"))
	s.Relays = stringList(resp.Value("relays"))
	return s, nil
}
