package run

import (
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/states"
)

// reqTypes are the requisite kinds check_requisite evaluates, in Salt's order.
var reqTypes = []string{"require", "require_any", "watch", "watch_any", "prereq",
	"onfail", "onfail_any", "onfail_all", "onchanges", "onchanges_any"}

// reqRef normalises a requisite reference to (key, value): a bare string
// is an ID, and `file.managed: x` is trimmed to `file: x` (trim_req).
func reqRef(req any) (string, any, bool) {
	switch x := req.(type) {
	case string:
		return "id", x, true
	case *ordered.Map:
		k, v, ok := compile.First(x)
		if !ok {
			return "", nil, false
		}
		k, _, _ = strings.Cut(k, ".")
		return k, v, true
	}
	return "", nil, false
}

func reqList(low Chunk, kind string) []any {
	l, _ := low.Value(kind).([]any)
	return l
}

// matches reports whether chunk is referenced by (key, val).
func matches(chunk Chunk, key string, val any) bool {
	if key == "sls" {
		return compile.Fnmatch(str(chunk.Value("__sls__")), str(val))
	}
	v, ok := val.(string)
	if !ok {
		return false
	}
	if compile.Fnmatch(str(chunk.Value("name")), v) || compile.Fnmatch(str(chunk.Value("__id__")), v) {
		return key == "id" || str(chunk.Value("state")) == key
	}
	return false
}

func str(v any) string { return ordered.KeyString(v) }

// hasModWatch reports whether the chunk's state module has mod_watch.
func (r *Runner) hasModWatch(low Chunk) bool {
	return r.States.Has(r.Env, str(low.Value("state"))+".mod_watch")
}

// watchToRequire turns watch into require for modules without mod_watch.
func (r *Runner) watchToRequire(low Chunk) bool {
	present := false
	for _, pair := range [][2]string{{"watch", "require"}, {"watch_any", "require_any"}} {
		w, ok := low.Get(pair[0])
		if !ok {
			continue
		}
		if r.hasModWatch(low) {
			present = true
			continue
		}
		wl, _ := w.([]any)
		low.Set(pair[1], append(append([]any(nil), reqList(low, pair[1])...), wl...))
		low.Delete(pair[0])
	}
	return present
}

type reqSet struct {
	kinds []string
	m     map[string][]Chunk
}

// checkRequisite evaluates the requisites of low against the states that
// ran (salt/state.py check_requisite) and returns met, unmet, fail, pre,
// onfail, onchanges or change.
func (r *Runner) checkRequisite(low Chunk, pre bool) (string, reqSet) {
	present := r.watchToRequire(low)
	for _, k := range []string{"require", "require_any", "prerequired", "prereq", "onfail",
		"onfail_any", "onfail_all", "onchanges", "onchanges_any"} {
		if low.Has(k) {
			present = true
		}
	}
	reqs := reqSet{kinds: append([]string(nil), reqTypes...), m: map[string][]Chunk{}}
	if pre {
		reqs.kinds = append(reqs.kinds, "prerequired")
	}
	if !present {
		return "met", reqs
	}
	for _, kind := range reqs.kinds {
		v, ok := low.Get(kind)
		if !ok || v == nil {
			continue
		}
		for _, req := range reqList(low, kind) {
			key, val, ok := reqRef(req)
			if !ok || val == nil {
				continue
			}
			found := r.referenced(key, val)
			if len(found) == 0 {
				return "unmet", reqs
			}
			reqs.m[kind] = append(reqs.m[kind], found...)
		}
	}
	fun := map[string]bool{}
	for _, kind := range reqs.kinds {
		for k := range r.kindStats(kind, reqs.m[kind]) {
			fun[k] = true
		}
	}
	return funStatus(fun), reqs
}

func (r *Runner) lookupRun(kind, tag string) (*ordered.Map, bool) {
	if strings.HasPrefix(kind, "prereq") && !strings.HasPrefix(kind, "prerequired") {
		v, ok := r.pre[tag]
		return v, ok
	}
	v, ok := r.running.Get(tag)
	if ok {
		// A parallel requisite is waited for (check_requisite's
		// reconcile_procs loop).
		r.reconcile(v)
	}
	return v, ok
}

func changed(ret *ordered.Map) bool {
	switch c := ret.Value("changes").(type) {
	case *ordered.Map:
		return c.Len() > 0
	case nil:
		return false
	case string:
		return c != ""
	case []any:
		return len(c) > 0
	}
	return true
}

// kindStats is the per-requisite-kind evaluation of check_requisite.
func (r *Runner) kindStats(kind string, chunks []Chunk) map[string]bool {
	st := map[string]bool{}
	for _, c := range chunks {
		ret, ok := r.lookupRun(kind, states.Tag(c))
		if !ok {
			st["unmet"] = true
			continue
		}
		res := ret.Value("result")
		if strings.HasPrefix(kind, "onfail") {
			if res == true {
				st["onfail"] = true
				continue
			}
		} else if res == false {
			st["fail"] = true
			continue
		}
		if strings.HasPrefix(kind, "onchanges") {
			if changed(ret) {
				st["onchangesmet"] = true
			} else {
				st["onchanges"] = true
			}
			continue
		}
		if strings.HasPrefix(kind, "watch") && changed(ret) {
			st["change"] = true
			continue
		}
		isPrereq := strings.HasPrefix(kind, "prereq") && !strings.HasPrefix(kind, "prerequired")
		if isPrereq && res == nil {
			st["premet"] = true
		}
		if strings.HasPrefix(kind, "prereq") && res != nil {
			if isPrereq {
				st["pre"] = true
			}
		} else if ran, ok := ret.Value("__state_ran__").(bool); !ok || ran {
			st["met"] = true
		}
	}
	if strings.HasSuffix(kind, "_any") || kind == "onfail" {
		if st["met"] || st["change"] {
			delete(st, "fail")
		}
		if st["onchangesmet"] {
			delete(st, "onchanges")
			delete(st, "fail")
		}
		if st["onfail"] && st["met"] {
			delete(st, "onfail")
		}
	}
	if strings.HasSuffix(kind, "_all") && st["onfail"] && st["met"] {
		delete(st, "met")
	}
	return st
}

func funStatus(s map[string]bool) string {
	switch {
	case s["unmet"]:
		return "unmet"
	case s["fail"]:
		return "fail"
	case s["pre"]:
		if s["premet"] {
			return "met"
		}
		return "pre"
	case s["onfail"] && !s["onchangesmet"]:
		return "onfail"
	case s["onchanges"] && !s["onchangesmet"]:
		return "onchanges"
	case s["change"]:
		return "change"
	case s["onfail"]:
		return "onfail"
	}
	return "met"
}

// lostComment formats requisites that match no chunk.
func lostComment(lost map[string][]any, kinds []string) string {
	var b strings.Builder
	b.WriteString("The following requisites were not found:\n")
	for _, kind := range kinds {
		if len(lost[kind]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s%s:\n", strings.Repeat(" ", 19), kind)
		for _, req := range lost[kind] {
			key, val, _ := reqRef(req)
			if m, ok := req.(*ordered.Map); ok {
				key, val, _ = compile.First(m)
				key, _, _ = strings.Cut(key, ".")
			}
			fmt.Fprintf(&b, "%s%s: %s\n", strings.Repeat(" ", 23), key, str(val))
		}
	}
	return b.String()
}
