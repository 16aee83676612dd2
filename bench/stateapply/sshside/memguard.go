package sshside

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// memLimitError is why a run was killed by its memory guard.
type memLimitError struct{ limit, seen int64 }

func (e *memLimitError) Error() string {
	return "killed by the benchmark's memory guard: the process group's RSS reached " + bytesize(e.seen) + " (limit " + bytesize(e.limit) + ")"
}

// guardMemory polls the resident memory of process group pgid and kills
// the group when it passes limit, so a run that would exhaust the shared
// machine's memory ends as a row instead of an OOM kill of someone
// else's process. It returns when ctx is done; the result is the error
// when it killed the group.
func guardMemory(ctx context.Context, pgid int, limit int64) <-chan error {
	done := make(chan error, 1)
	if limit <= 0 {
		done <- nil
		return done
	}
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				done <- nil
				return
			case <-tick.C:
			}
			if rss := groupRSS(pgid); rss > limit {
				syscall.Kill(-pgid, syscall.SIGKILL)
				done <- &memLimitError{limit: limit, seen: rss}
				return
			}
		}
	}()
	return done
}

// groupRSS sums VmRSS over the processes of group pgid (from
// /proc/<pid>/stat field 5 and /proc/<pid>/statm).
func groupRSS(pgid int) int64 {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	page := int64(os.Getpagesize())
	var sum int64
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses.
		i := strings.LastIndexByte(string(stat), ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		statm, err := os.ReadFile(filepath.Join(d, "statm"))
		if err != nil {
			continue
		}
		if g := strings.Fields(string(statm)); len(g) > 1 {
			n, _ := strconv.ParseInt(g[1], 10, 64)
			sum += n * page
		}
	}
	return sum
}
