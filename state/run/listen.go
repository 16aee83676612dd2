package run

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/state/ordered"
	"github.com/brinesalt/brine/state/states"
)

type cref struct{ state, id, name string }

func (c cref) has(v string) bool { return c.state == v || c.id == v || c.name == v }

// CallListen appends the mod_watch runs of listen/listen_in (salt/state.py
// call_listen): once per listening state whose listened states changed.
func (r *Runner) CallListen(ctx context.Context, chunks []Chunk, running *Results) error {
	type listener struct {
		key cref
		to  []any
	}
	var crefs []cref
	byRef := map[cref]Chunk{}
	var listeners []listener
	for _, c := range chunks {
		k := cref{str(c.Value("state")), str(c.Value("__id__")), str(c.Value("name"))}
		if _, ok := byRef[k]; !ok {
			crefs = append(crefs, k)
		}
		byRef[k] = c
		if l, ok := c.Value("listen").([]any); ok {
			listeners = append(listeners, listener{k, l})
		}
		if l, ok := c.Value("listen_in").([]any); ok {
			for _, item := range l {
				m, ok := item.(*ordered.Map)
				if !ok {
					continue
				}
				m.Range(func(kk, v any) bool {
					listeners = append(listeners, listener{cref{str(kk), str(v), "lookup"},
						[]any{ordered.FromPairs(c.Value("state"), c.Value("__id__"))}})
					return true
				})
			}
		}
	}
	errs := ordered.New()
	var watchers []Chunk
	seen := map[string]bool{}
	lerr := func(state, id string) {
		tag := fmt.Sprintf("Listen_Error_|-listen_%s_|-listen_%s_|-Listen_Error", id, state)
		errs.Set(tag, ordered.FromPairs("comment", fmt.Sprintf("Referenced state %s: %s does not exist", state, id),
			"name", fmt.Sprintf("listen_%s:%s", state, id), "result", false, "changes", ordered.New()))
	}
	for _, l := range listeners {
		for _, to := range l.to {
			tm, ok := to.(*ordered.Map)
			if !ok {
				found := false
				for _, c := range chunks {
					if str(c.Value("__id__")) == str(to) || str(c.Value("name")) == str(to) {
						tm, found = ordered.FromPairs(c.Value("state"), c.Value("__id__")), true
					}
				}
				if !found {
					continue
				}
			}
			tm.Range(func(lk, lv any) bool {
				lkey, lval := str(lk), str(lv)
				var targets []cref
				for _, c := range crefs {
					if c.state == lkey && c.has(lval) {
						targets = append(targets, c)
					}
				}
				if len(targets) == 0 {
					lerr(lkey, lval)
					return true
				}
				for _, t := range targets {
					ret, ok := running.Get(states.Tag(byRef[t]))
					if !ok || !changed(ret) {
						continue
					}
					var listening []cref
					for _, c := range crefs {
						if c.state == l.key.state && c.has(l.key.id) {
							listening = append(listening, c)
						}
					}
					if len(listening) == 0 {
						lerr(l.key.state, l.key.id)
						continue
					}
					for _, c := range listening {
						w := byRef[c].Copy()
						w.Set("sfun", w.Value("fun"))
						w.Set("fun", "mod_watch")
						w.Set("__id__", "listener_"+str(w.Value("__id__")))
						for _, k := range w.Keys() {
							if states.IsRequisite(str(k)) {
								w.Delete(k)
							}
						}
						if t := states.Tag(w); !seen[t] {
							seen[t] = true
							watchers = append(watchers, w)
						}
					}
				}
				return true
			})
		}
	}
	if len(watchers) > 0 {
		sub := &Runner{States: r.States, Env: r.Env, Failhard: r.Failhard, Log: r.Log, Now: r.Now, runNum: r.runNum, pre: r.pre}
		res, err := sub.CallChunks(ctx, watchers)
		if err != nil {
			return err
		}
		r.runNum = sub.runNum
		for _, t := range res.Tags() {
			v, _ := res.Get(t)
			running.Set(t, v)
		}
	}
	errs.Range(func(k, v any) bool {
		m := v.(*ordered.Map)
		m.Set("__run_num__", r.nextRunNum())
		running.Set(str(k), m)
		return true
	})
	return nil
}
