package proc

import (
	"context"
	"errors"
	"os"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// Job is one running job, the data Salt keeps in its proc files.
type Job struct {
	JID     string
	Fun     string
	Arg     []any
	Tgt     string
	TgtType string
	User    string
	// Pid is the process running the job.
	Pid int
	// Started is when the job started.
	Started time.Time
	// Cancel, when set, stops a job that runs inside this process; a
	// signal to stop it cancels its context with ErrSignalled instead of
	// signalling the process.
	Cancel context.CancelCauseFunc
}

// Value is the job as saltutil.running lists it.
func (j Job) Value() *ordered.Map {
	arg := j.Arg
	if arg == nil {
		arg = []any{}
	}
	tgtType := j.TgtType
	if tgtType == "" {
		tgtType = "glob"
	}
	return ordered.FromPairs("arg", arg, "fun", j.Fun, "jid", j.JID, "pid", j.Pid, "ret", "",
		"tgt", j.Tgt, "tgt_type", tgtType, "user", j.User)
}

// ErrSignalled is the cancel cause of an in-process job stopped by
// saltutil.signal_job, term_job or kill_job.
var ErrSignalled = errors.New("job stopped by a signal")

// JobRegistry is a set of running jobs keyed by JID. It is safe for
// concurrent use.
type JobRegistry struct {
	mu   sync.Mutex
	jobs map[string]Job
}

// NewJobRegistry returns an empty registry.
func NewJobRegistry() *JobRegistry { return &JobRegistry{jobs: map[string]Job{}} }

// Jobs is the registry of this process: the thin binary and the minion
// add the jobs they run to it. Functions read Env.Context[ContextKey]
// first, so tests can use their own registry.
var Jobs = NewJobRegistry()

// ContextKey is the Env.Context key of a *JobRegistry that overrides
// Jobs for one call.
const ContextKey = "saltutil.jobs"

// Add records j as running and returns the function that removes it.
func (r *JobRegistry) Add(j Job) (done func()) {
	if j.Pid == 0 {
		j.Pid = os.Getpid()
	}
	if j.Started.IsZero() {
		j.Started = time.Now()
	}
	r.mu.Lock()
	r.jobs[j.JID] = j
	r.mu.Unlock()
	return func() { r.remove(j.JID) }
}

func (r *JobRegistry) remove(jid string) {
	r.mu.Lock()
	delete(r.jobs, jid)
	r.mu.Unlock()
}

// List returns the running jobs, oldest first.
func (r *JobRegistry) List() []Job {
	r.mu.Lock()
	out := make([]Job, 0, len(r.jobs))
	for _, j := range r.jobs {
		out = append(out, j)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, k int) bool {
		if !out[i].Started.Equal(out[k].Started) {
			return out[i].Started.Before(out[k].Started)
		}
		return out[i].JID < out[k].JID
	})
	return out
}

// Find returns the running job jid.
func (r *JobRegistry) Find(jid string) (Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[jid]
	return j, ok
}

// Signal stops or signals job j as saltutil.signal_job does and returns
// Salt's message.
func (r *JobRegistry) Signal(j Job, sig syscall.Signal) string {
	sent := "Signal " + strconv.Itoa(int(sig)) + " sent to job " + j.JID + " at pid " + strconv.Itoa(j.Pid)
	if j.Pid == os.Getpid() {
		if j.Cancel == nil {
			return "Job " + j.JID + " runs in this process and cannot be signalled"
		}
		j.Cancel(ErrSignalled)
		return sent
	}
	if err := kill(j.Pid, sig); err != nil {
		r.remove(j.JID)
		return "Job " + j.JID + " was not running and job data has been cleaned up"
	}
	return sent
}
