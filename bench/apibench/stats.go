package main

import (
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"
)

// samples collects latencies from many goroutines.
type samples struct {
	mu   sync.Mutex
	d    []time.Duration
	errs int
	last error
}

func (s *samples) add(d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errs++
		s.last = err
		return
	}
	s.d = append(s.d, d)
}

// quantile returns the q-quantile (nearest rank) of the samples.
func (s *samples) quantile(q float64) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.d) == 0 {
		return 0
	}
	d := slices.Clone(s.d)
	slices.Sort(d)
	i := int(q*float64(len(d))+0.5) - 1
	return d[min(max(i, 0), len(d)-1)]
}

func (s *samples) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.d)
}

// errSummary says how many calls failed and the last error.
func (s *samples) errSummary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.errs == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d errors, last: %v)", s.errs, s.last)
}

// ms formats a duration in milliseconds with one decimal.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
}

// cpuTime is this process's user+system CPU time so far: the load
// generator's own cost, reported beside each run so its overhead is seen.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
