package wrapper

import (
	"fmt"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// step is one part of a bootstrap, shown as a state result.
type step struct {
	ID, Name string
	result   bool
	comment  string
	changes  *ordered.Map
}

func stepFromMap(m *ordered.Map) step {
	s := step{}
	s.ID, _ = m.Value("id").(string)
	s.Name, _ = m.Value("name").(string)
	s.result, _ = m.Value("result").(bool)
	s.comment, _ = m.Value("comment").(string)
	s.changes, _ = m.Value("changes").(*ordered.Map)
	return s
}

// bootstrapResult collects the steps in the shape of a highstate return
// ({"minion_|-<step>_|-<name>_|-bootstrap": {result, comment, …}}),
// so salt-ssh's highstate outputter and --out json show it as a state
// run; failed marks any failed step.
type bootstrapResult struct {
	steps  *ordered.Map
	failed bool
}

func (r *bootstrapResult) add(s step) {
	if r.steps == nil {
		r.steps = ordered.New()
	}
	changes := s.changes
	if changes == nil {
		changes = ordered.New()
	}
	key := fmt.Sprintf("minion_|-%s_|-%s_|-bootstrap", s.ID, s.Name)
	r.steps.Set(key, ordered.FromPairs(
		"__id__", s.ID, "name", s.Name, "result", s.result, "comment", s.comment, "changes", changes,
		"__run_num__", r.steps.Len(), "start_time", time.Now().Format("15:04:05.000000"), "duration", 0.0,
		"__sls__", nil))
	if !s.result {
		r.failed = true
	}
}

func (r *bootstrapResult) fail(id, name string, err error) {
	r.add(step{ID: id, Name: name, comment: err.Error()})
}
