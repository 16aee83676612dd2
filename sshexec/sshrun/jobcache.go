package sshrun

import (
	"os/user"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/sshexec"
)

// jobRecord writes a salt-ssh run into the master's job cache
// (<cachedir>/jobs, the local_cache returner), as salt/client/ssh/
// __init__.py SSH.run does with save_load and cache_job, so that
// salt-run jobs.lookup_jid and jobs.list_jobs show salt-ssh runs beside
// master jobs. A cache that cannot be written is logged, never the end
// of the run (Salt logs "Could not save load").
type jobRecord struct {
	sr    *Run
	fun   string
	cache *jobcache.Cache
}

// startJob saves the run's load: {jid, tgt_type, tgt, user, fun, arg},
// where arg is Settings.JobArgs (the command line after the function as
// typed) and a raw shell run is the function "ssh._raw".
func (sr *Run) startJob() *jobRecord {
	fun, arg := sr.s.Fun, sr.s.JobArgs
	if sr.s.Raw {
		fun = "ssh._raw"
	}
	if arg == nil {
		arg = []any{}
	}
	load := ordered.FromPairs("jid", sr.job.JID, "tgt_type", sr.s.TgtType, "tgt", sr.s.Target,
		"user", sr.user(), "fun", fun, "arg", arg)
	ids := make([]string, len(sr.targets))
	for i, t := range sr.targets {
		ids[i] = t.ID
	}
	c := jobcache.New(sr.cfg.CacheDir)
	if err := c.SaveLoad(sr.job.JID, load, ids); err != nil {
		sr.log.Error("Could not save load with returner local_cache", logattr.JID, sr.job.JID, logattr.Err, err)
		return &jobRecord{sr: sr, fun: fun}
	}
	return &jobRecord{sr: sr, fun: fun, cache: c}
}

// add stores one host's result. Like Salt's cache_job, the stored
// "return" is the whole per-host data salt-ssh displays ({return,
// retcode, out} from the remote salt-call, or the failure), so
// jobs.lookup_jid shows it nested as Salt does for salt-ssh jobs; the
// retcode and success fields are filled in as for a minion's return.
func (j *jobRecord) add(r sshexec.Result) {
	if j.cache == nil {
		return
	}
	ret := &protocol.Return{ID: r.ID, JID: j.sr.job.JID, Fun: j.fun, Return: HostReturn(r),
		Retcode: r.Retcode, Success: r.Retcode == 0}
	if err := j.cache.SaveReturn(ret); err != nil {
		j.sr.log.Error("Could not store the return in the job cache", logattr.JID, ret.JID, logattr.Host, r.ID, logattr.Err, err)
	}
}

// user is who the job cache records: the caller the run is for (an
// API user), else Salt's default "user" option, the user running the
// command.
func (sr *Run) user() string {
	if sr.s.Caller != "" {
		return sr.s.Caller
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}
