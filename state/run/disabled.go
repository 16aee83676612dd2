package run

import (
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/states"
)

// dropDisabled removes the chunks whose `state.fun` matches a pattern of
// the state_runs_disabled grain (set by state.disable) and records
// Salt's failed return for each, before anything runs (the first loop of
// salt/state.py call_chunks).
func (r *Runner) dropDisabled(chunks []Chunk) []Chunk {
	if r.Env == nil || r.Env.Grains() == nil {
		return chunks
	}
	pats, _ := r.Env.Grains().Value("state_runs_disabled").([]any)
	if len(pats) == 0 {
		return chunks
	}
	kept := chunks[:0:0]
	for _, low := range chunks {
		fun := str(low.Value("state")) + "." + str(low.Value("fun"))
		pat, ok := firstMatch(fun, pats)
		if !ok {
			kept = append(kept, low)
			continue
		}
		r.running.Set(states.Tag(low), ordered.FromPairs("changes", ordered.New(), "result", false,
			"comment", fmt.Sprintf("The state function \"%s\" is currently disabled by \"%s\", to re-enable, run state.enable %s.", fun, pat, pat),
			"__run_num__", r.nextRunNum(), "__sls__", low.Value("__sls__")))
	}
	// Salt removes them from the chunk list itself, so a requisite on a
	// disabled state finds nothing.
	r.chunks, r.index = kept, chunkIndex{}
	return kept
}

func firstMatch(name string, pats []any) (string, bool) {
	for _, p := range pats {
		if s := str(p); compile.Fnmatch(name, s) {
			return s, true
		}
	}
	return "", false
}
