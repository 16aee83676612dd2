package run

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

type retrySpec struct {
	until                     bool
	attempts, interval, splay int
}

// retryData validates a `retry` value (verify_retry_data).
func retryData(v any) retrySpec {
	def := retrySpec{until: true, attempts: 2, interval: 30}
	switch x := v.(type) {
	case *ordered.Map:
		s := def
		if u, ok := x.Value("until").(bool); ok {
			s.until = u
		}
		for k, p := range map[string]*int{"attempts": &s.attempts, "interval": &s.interval, "splay": &s.splay} {
			if i, ok := x.Value(k).(int); ok {
				*p = i
			}
		}
		return s
	case bool:
		if !x {
			def.attempts = 0
		}
		return def
	}
	return retrySpec{}
}

// retry re-runs a state whose result differs from retry's `until`
// (salt/state.py State.call). Each attempt uses up a run number; the
// error is an attempt's *FatalError.
func (r *Runner) retry(ctx context.Context, low Chunk, reqs map[string][]Chunk, retries int, ret *ordered.Map, env *modules.Env) (*ordered.Map, error) {
	s := retryData(low.Value("retry"))
	if env.Test {
		c, _ := ret.Value("comment").(string)
		ret.Set("comment", c+"  "+s.testComment())
		return ret, nil
	}
	if ret.Value("result") == s.until || s.attempts <= retries {
		return ret, nil
	}
	interval, ok := s.wait(ctx)
	if !ok {
		return ret, nil
	}
	next, err := r.call(ctx, low, reqs, retries+1)
	if err != nil {
		return nil, err
	}
	c, _ := next.Value("comment").(string)
	next.Set("comment", fmt.Sprintf("Attempt %d: Returned a result of \"%s\", with the following comment: \"%s\"\n%s",
		retries, pyBool(ret.Value("result")), str(ret.Value("comment")), c))
	d1, _ := next.Value("duration").(float64)
	d0, _ := ret.Value("duration").(float64)
	next.Set("duration", d1+d0+float64(interval*1000))
	if retries == 1 {
		next.Set("start_time", ret.Value("start_time"))
	}
	return next, nil
}

func pyBool(v any) string { return ordered.KeyString(v) }

// wait sleeps for the retry interval plus a random splay and returns
// the seconds waited; false when ctx ended first.
func (s retrySpec) wait(ctx context.Context) (int, bool) {
	interval := s.interval
	if s.splay > 0 {
		interval += rand.IntN(s.splay + 1)
	}
	select {
	case <-ctx.Done():
		return interval, false
	case <-time.After(time.Duration(interval) * time.Second):
		return interval, true
	}
}

// testComment is what test=True appends to a retried state's comment.
func (s retrySpec) testComment() string {
	return fmt.Sprintf("The state would be retried every %d seconds (with a splay of up to %d seconds) a maximum of %d times or until a result of %s is returned",
		s.interval, s.splay, s.attempts, pyBool(s.until))
}
