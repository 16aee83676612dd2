package netapi

import (
	"sync/atomic"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// stats are the counters /stats reports (CherryPy's cpstats, which
// collect only with collect_stats).
type stats struct {
	enabled  bool
	start    time.Time
	current  atomic.Int64
	total    atomic.Int64
	read     atomic.Int64
	written  atomic.Int64
	busyNano atomic.Int64
}

func newStats(enabled bool) *stats { return &stats{enabled: enabled, start: time.Now()} }

// begin counts a request in; the returned func counts it out with the
// bytes it read and wrote.
func (st *stats) begin() func(read, written int64) {
	if !st.enabled {
		return func(int64, int64) {}
	}
	st.current.Add(1)
	t := time.Now()
	return func(read, written int64) {
		st.current.Add(-1)
		st.total.Add(1)
		st.read.Add(read)
		st.written.Add(written)
		st.busyNano.Add(int64(time.Since(t)))
	}
}

// report is the /stats document, in cpstats' shape: one section per
// application with its counters.
func (st *stats) report(subscribers int) *ordered.Map {
	up := time.Since(st.start).Seconds()
	app := ordered.FromPairs("Enabled", st.enabled, "Start Time", float64(st.start.UnixNano())/1e9, "Uptime", up,
		"Current Time", float64(time.Now().UnixNano())/1e9, "Event Subscribers", subscribers)
	if st.enabled {
		total := st.total.Load()
		app.Set("Current Requests", st.current.Load())
		app.Set("Total Requests", total)
		app.Set("Total Bytes Read", st.read.Load())
		app.Set("Total Bytes Written", st.written.Load())
		app.Set("Total Time", float64(st.busyNano.Load())/1e9)
		if up > 0 {
			app.Set("Requests/Second", float64(total)/up)
		}
	}
	return ordered.FromPairs("CherryPy Applications", ordered.FromPairs("salt-api", app))
}
