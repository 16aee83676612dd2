package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/logattr"
)

// logCount is a slog handler that keeps no lines, only how often each
// warning or error was logged (message and the error's last clause), so
// a swarm of thousands of minions can say why its sign-ins are slow
// (timeouts, refusals, retries) without a log of millions of lines.
type logCount struct {
	mu     *sync.Mutex
	counts map[string]int
}

func newLogCount() *logCount { return &logCount{mu: &sync.Mutex{}, counts: map[string]int{}} }

func (l *logCount) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelWarn }

func (l *logCount) Handle(_ context.Context, r slog.Record) error {
	key := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == logattr.Err {
			// The last clause of a wrapped error is the cause
			// ("context deadline exceeded", "bad load").
			s := a.Value.String()
			if i := strings.LastIndex(s, ": "); i >= 0 {
				s = s[i+2:]
			}
			key += ": " + s
		}
		return true
	})
	l.mu.Lock()
	l.counts[key]++
	l.mu.Unlock()
	return nil
}

func (l *logCount) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCount) WithGroup(string) slog.Handler      { return l }

// String is the counts, most frequent first.
func (l *logCount) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(l.counts), func(a, b string) int { return l.counts[b] - l.counts[a] })
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%d× %q", l.counts[k], k))
	}
	if len(out) == 0 {
		return "no warnings"
	}
	return strings.Join(out, ", ")
}
