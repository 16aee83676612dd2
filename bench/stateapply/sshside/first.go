package sshside

import "time"

// FirstWall is the median wall time of t's first runs, 0 when none ran.
func (t *Tool) FirstWall() time.Duration {
	if len(t.first) == 0 {
		return 0
	}
	return median(t.first).Wall
}
