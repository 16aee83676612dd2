package run

import (
	"context"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/states"
)

// unmetKinds are the requisite kinds call_chunk searches to pull forward.
var unmetKinds = []string{"require", "require_any", "watch", "watch_any", "prereq",
	"onfail", "onfail_any", "onchanges", "onchanges_any"}

func truthy(low Chunk, key string) bool {
	v, ok := low.Get(key)
	if !ok {
		return false
	}
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case []any:
		return len(x) > 0
	}
	return true
}

// callChunk runs low after the requisites it needs (salt/state.py
// call_chunk). Its error is a *FatalError, which aborts the job.
func (r *Runner) callChunk(ctx context.Context, low Chunk, depth int) error {
	low = r.modAggregate(ctx, low)
	tag := states.Tag(low)
	if !truthy(low, "prerequired") {
		r.active[tag] = true
	}
	isPre := truthy(low, "__prereq__")
	status, reqs := r.checkRequisite(low, !isPre)
	switch status {
	case "unmet":
		return r.pullForward(ctx, low, tag, depth)
	case "met":
		return r.callStore(ctx, isPre, tag, low)
	case "fail":
		r.failed(low, tag, reqs)
	case "change":
		if isPre {
			return r.callStore(ctx, isPre, tag, low)
		}
		return r.callWatched(ctx, low, tag, reqs)
	case "pre":
		ret := r.notRun(low, true, "No changes detected", true)
		r.running.Set(tag, ret)
		r.pre[tag] = ret
	case "onfail":
		r.running.Set(tag, r.notRun(low, true, "State was not run because onfail req did not change", false))
	case "onchanges":
		r.running.Set(tag, r.notRun(low, true, "State was not run because none of the onchanges reqs changed", false))
	}
	return nil
}

// callStore runs low and saves its return in pre (for a prereq test run)
// or running.
func (r *Runner) callStore(ctx context.Context, isPre bool, tag string, low Chunk) error {
	ret, err := r.call(ctx, low, nil, 1)
	if err != nil {
		return err
	}
	if isPre {
		r.pre[tag] = ret
	} else {
		r.running.Set(tag, ret)
	}
	return nil
}

// callWatched runs a state whose watched requisites changed, then its
// mod_watch unless the run itself changed something or asked to skip
// it. A parallel state's first return is the placeholder, which has no
// changes, so its mod_watch always runs too (salt/state.py call_chunk).
// Salt then reads back whichever of the two runs wrote its cache file
// under the tag; Brine keeps mod_watch's.
func (r *Runner) callWatched(ctx context.Context, low Chunk, tag string, reqs reqSet) error {
	ret, err := r.call(ctx, low, nil, 1)
	if err != nil {
		return err
	}
	if !changed(ret) && ret.Value("skip_watch") != true {
		w := low.Copy()
		w.Set("sfun", low.Value("fun"))
		w.Set("fun", "mod_watch")
		if ret, err = r.call(ctx, w, reqs.m, 1); err != nil {
			return err
		}
	}
	r.running.Set(tag, ret)
	return nil
}

// failed records a requisite failure, or the test-mode return of a prereq
// target whose pre-state failed.
func (r *Runner) failed(low Chunk, tag string, reqs reqSet) {
	if p, ok := r.pre[tag]; ok {
		if changed(p) {
			p.Set("changes", ordered.New())
		}
		p.Set("__run_num__", r.nextRunNum())
		for _, k := range []string{"__sls__", "__id__", "name"} {
			p.Set(k, low.Value(k))
		}
		r.running.Set(tag, p)
		return
	}
	var failedReqs []string
	seen := map[string]bool{}
	for _, kind := range reqs.kinds {
		for _, c := range reqs.m[kind] {
			ct := states.Tag(c)
			ret, ok := r.pre[ct]
			if !ok {
				ret, ok = r.running.Get(ct)
			}
			if !ok || ret.Value("result") != false {
				continue
			}
			key := str(c.Value("__sls__")) + "." + str(c.Value("__id__"))
			if !seen[key] {
				seen[key] = true
				failedReqs = append(failedReqs, key)
			}
		}
	}
	ret := r.notRun(low, false, "One or more requisite failed: "+strings.Join(failedReqs, ", "), true)
	ret.Delete("__state_ran__")
	r.running.Set(tag, ret)
	r.pre[tag] = ret
}

// pullForward runs the requisites of low that have not run yet, then low
// itself; a requisite that matches nothing fails low (the "unmet" branch
// of call_chunk).
func (r *Runner) pullForward(ctx context.Context, low Chunk, tag string, depth int) error {
	kinds := append([]string(nil), unmetKinds...)
	if !truthy(low, "__prereq__") {
		kinds = append(kinds, "prerequired")
	}
	found, lost := r.resolve(low, kinds)
	if len(lost) > 0 {
		ret := r.notRun(low, false, lostComment(lost, kinds), true)
		ret.Delete("__state_ran__")
		if truthy(low, "__prereq__") {
			r.pre[tag] = ret
		} else {
			r.running.Set(tag, ret)
		}
		return nil
	}
	last, stop, err := r.runRequisites(ctx, low, tag, found)
	if stop || err != nil {
		return err
	}
	switch {
	case truthy(low, "__prereq__"):
		err = r.prereqRun(ctx, low, tag)
	case depth+1 >= 20:
		r.running.Set(tag, r.recursive(low))
	default:
		err = r.callChunk(ctx, low, depth+1)
	}
	if err != nil {
		return err
	}
	if last != nil && r.checkFailhard(last) {
		r.failhard = true
	}
	return nil
}

// resolve finds the chunks low's requisites name, marking prereq targets
// for a test run, and the requisites that match nothing, by kind.
func (r *Runner) resolve(low Chunk, kinds []string) ([]Chunk, map[string][]any) {
	var found []Chunk
	var lost map[string][]any
	for _, kind := range kinds {
		for _, req := range reqList(low, kind) {
			key, val, ok := reqRef(req)
			if !ok {
				continue
			}
			hit := false
			for _, c := range r.chunks {
				if val == nil || !matches(c, key, val) {
					continue
				}
				switch {
				case kind == "prereq":
					c.Set("__prereq__", true)
				case kind == "prerequired" && key != "sls":
					c.Set("__prerequired__", true)
				}
				found = append(found, c)
				hit = true
			}
			if !hit {
				if lost == nil {
					lost = map[string][]any{}
				}
				lost[kind] = append(lost[kind], req)
			}
		}
	}
	return found, lost
}

// runRequisites runs the found requisites that have not run. stop reports
// that low must not run now: a requisite cycle or failhard; err is a
// requisite's *FatalError.
func (r *Runner) runRequisites(ctx context.Context, low Chunk, tag string, found []Chunk) (last Chunk, stop bool, err error) {
	for _, c := range found {
		last = c
		ct := states.Tag(c)
		if r.running.Has(ct) {
			continue
		}
		if r.active[ct] {
			return last, true, r.activeRequisite(ctx, low, tag, c)
		}
		if err := r.callChunk(ctx, c, 0); err != nil {
			return last, true, err
		}
		if r.checkFailhard(c) {
			r.failhard = true
			return last, true, nil
		}
	}
	return last, false, nil
}

// activeRequisite handles a requisite c that is itself still being
// evaluated: a prerequired target gets low's prereq test run, anything
// else is a requisite loop.
func (r *Runner) activeRequisite(ctx context.Context, low Chunk, tag string, c Chunk) error {
	if !truthy(c, "__prerequired__") {
		r.running.Set(tag, r.recursive(low))
		r.runNum++
		return nil
	}
	if _, ok := r.pre[tag]; ok {
		return nil
	}
	low.Set("__prereq__", true)
	ret, err := r.call(ctx, low, nil, 1)
	if err != nil {
		return err
	}
	r.pre[states.Tag(c)] = ret
	return nil
}

// prereqRun is the test-mode run of a prereq target once its own
// requisites ran; a target whose watch fired counts as changing.
func (r *Runner) prereqRun(ctx context.Context, low Chunk, tag string) error {
	status, _ := r.checkRequisite(low, false)
	ret, err := r.call(ctx, low, nil, 1)
	if err != nil {
		return err
	}
	r.pre[tag] = ret
	if !changed(ret) && status == "change" {
		ret.Set("changes", ordered.FromPairs("watch", "watch"))
		ret.Set("result", nil)
	}
	return nil
}

// recursive is the return of a chunk caught in a requisite loop at run time.
func (r *Runner) recursive(low Chunk) *ordered.Map {
	ret := ordered.FromPairs("changes", ordered.New(), "result", false,
		"comment", "Recursive requisite found", "__run_num__", r.runNum)
	for _, k := range []string{"__sls__", "__id__", "name"} {
		ret.Set(k, low.Value(k))
	}
	return ret
}
