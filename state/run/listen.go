package run

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/states"
)

// cref is a chunk's (state, __id__, name), Salt's crefs key in call_listen.
type cref struct{ state, id, name string }

func (c cref) has(v string) bool { return c.state == v || c.id == v || c.name == v }

// listener is a listening state (key) and what it listens to.
type listener struct {
	key cref
	to  []any
}

// listenIndex holds the chunks by cref, in first-seen order.
type listenIndex struct {
	crefs []cref
	by    map[cref]Chunk
}

func (x *listenIndex) matching(state, v string) []cref {
	var out []cref
	for _, c := range x.crefs {
		if c.state == state && c.has(v) {
			out = append(out, c)
		}
	}
	return out
}

// listeners gathers listen and listen_in declarations; a listen_in is
// recorded as the target listening with the declaring state's ID.
func listeners(chunks []Chunk) (*listenIndex, []listener) {
	idx := &listenIndex{by: map[cref]Chunk{}}
	var ls []listener
	for _, c := range chunks {
		k := cref{str(c.Value("state")), str(c.Value("__id__")), str(c.Value("name"))}
		if _, ok := idx.by[k]; !ok {
			idx.crefs = append(idx.crefs, k)
		}
		idx.by[k] = c
		if l, ok := c.Value("listen").([]any); ok {
			ls = append(ls, listener{k, l})
		}
		l, _ := c.Value("listen_in").([]any)
		for _, item := range l {
			if m, ok := item.(*ordered.Map); ok {
				m.Range(func(kk, v any) bool {
					ls = append(ls, listener{cref{str(kk), str(v), "lookup"},
						[]any{ordered.FromPairs(c.Value("state"), c.Value("__id__"))}})
					return true
				})
			}
		}
	}
	return idx, ls
}

// listenRef turns a bare ID or name into {state: id}; the last chunk that
// matches wins, as in Salt.
func listenRef(chunks []Chunk, to any) (*ordered.Map, bool) {
	if m, ok := to.(*ordered.Map); ok {
		return m, true
	}
	var out *ordered.Map
	for _, c := range chunks {
		if str(c.Value("__id__")) == str(to) || str(c.Value("name")) == str(to) {
			out = ordered.FromPairs(c.Value("state"), c.Value("__id__"))
		}
	}
	return out, out != nil
}

// CallListen appends the mod_watch runs of listen/listen_in (salt/state.py
// call_listen): once per listening state whose listened states changed,
// with the ID `listener_<id>`, after every other state.
func (r *Runner) CallListen(ctx context.Context, chunks []Chunk, running *Results) error {
	idx, ls := listeners(chunks)
	errs := ordered.New()
	lerr := func(state, id string) {
		tag := fmt.Sprintf("Listen_Error_|-listen_%s_|-listen_%s_|-Listen_Error", id, state)
		errs.Set(tag, ordered.FromPairs("comment", fmt.Sprintf("Referenced state %s: %s does not exist", state, id),
			"name", fmt.Sprintf("listen_%s:%s", state, id), "result", false, "changes", ordered.New()))
	}
	var watchers []Chunk
	seen := map[string]bool{}
	for _, l := range ls {
		for _, to := range l.to {
			tm, ok := listenRef(chunks, to)
			if !ok {
				continue
			}
			tm.Range(func(lk, lv any) bool {
				targets := idx.matching(str(lk), str(lv))
				if len(targets) == 0 {
					lerr(str(lk), str(lv))
					return true
				}
				for _, t := range targets {
					ret, ok := running.Get(states.Tag(idx.by[t]))
					if !ok || !changed(ret) {
						continue
					}
					listening := idx.matching(l.key.state, l.key.id)
					if len(listening) == 0 {
						lerr(l.key.state, l.key.id)
						continue
					}
					for _, c := range listening {
						if w := modWatchChunk(idx.by[c]); !seen[states.Tag(w)] {
							seen[states.Tag(w)] = true
							watchers = append(watchers, w)
						}
					}
				}
				return true
			})
		}
	}
	if err := r.runWatchers(ctx, watchers, running); err != nil {
		return err
	}
	errs.Range(func(k, v any) bool {
		m := v.(*ordered.Map)
		m.Set("__run_num__", r.nextRunNum())
		running.Set(str(k), m)
		return true
	})
	return nil
}

// modWatchChunk is the listener chunk: mod_watch under `listener_<id>`,
// without requisites.
func modWatchChunk(c Chunk) Chunk {
	w := c.Copy()
	w.Set("sfun", w.Value("fun"))
	w.Set("fun", "mod_watch")
	w.Set("__id__", "listener_"+str(w.Value("__id__")))
	for _, k := range w.Keys() {
		if keyword.IsRequisite(str(k)) {
			w.Delete(k)
		}
	}
	return w
}

// runWatchers runs the listener chunks with the job's run numbers.
func (r *Runner) runWatchers(ctx context.Context, watchers []Chunk, running *Results) error {
	if len(watchers) == 0 {
		return nil
	}
	sub := &Runner{States: r.States, Env: r.Env, Failhard: r.Failhard, Log: r.Log, Now: r.Now, Template: r.Template, Refresh: r.Refresh,
		runNum: r.runNum, pre: r.pre}
	res, err := sub.CallChunks(ctx, watchers)
	if err != nil {
		return err
	}
	r.runNum = sub.runNum
	for _, t := range res.Tags() {
		v, _ := res.Get(t)
		running.Set(t, v)
	}
	return nil
}
