package main

import (
	"fmt"
	"slices"
	"time"
)

type stats struct{ median, p90, min time.Duration }

func summarize(xs []time.Duration) stats {
	s := slices.Clone(xs)
	slices.Sort(s)
	return stats{median: s[len(s)/2], p90: s[len(s)*9/10], min: s[0]}
}

// dur prints a duration in the unit that keeps three significant digits.
func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
	}
}
