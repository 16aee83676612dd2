package master

import (
	"context"
	"errors"
	"os"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/modules"
)

// runRunner runs a runner function for salt-run as a job of its own, as
// Salt's RunnerClient.low does (salt/client/mixins.py): it gets a jid,
// fires salt/run/<jid>/new and salt/run/<jid>/ret, and, unless
// runner_returns is off, is stored in the job cache with fun
// runner.<name> (salt/utils/job.py store_job), so jobs.list_jobs lists
// it and jobs.lookup_jid shows its return under the master's id. With
// verify, a function the master does not have is refused before it
// becomes a job, as the client's verify_fun refuses it; without (an
// asynchronous call, which Salt verifies inside the job), the job fails
// with that error as its return.
func (m *Master) runRunner(ctx context.Context, jid, fun string, args []any, kw *ordered.Map, user string, verify bool) (any, error) {
	_, ret, err := m.runRunnerData(ctx, jid, fun, args, kw, user, verify)
	return ret, err
}

// runRunnerData is runRunner answering the job's data as well ({fun,
// jid, user, fun_args, return, success}), RunnerClient.low's
// full_return; data is nil when verify refused the function.
func (m *Master) runRunnerData(ctx context.Context, jid, fun string, args []any, kw *ordered.Map, user string, verify bool) (*ordered.Map, any, error) {
	if user == "" {
		user = "UNKNOWN"
	}
	ctx = withRunJID(ctx, jid)
	funArgs := append([]any{}, orList(args)...)
	if kw != nil && kw.Len() > 0 {
		funArgs = append(funArgs, kw)
	}
	data := ordered.FromPairs("fun", "runner."+fun, "jid", jid, "user", user, "fun_args", funArgs)
	// A runner served from Options.Runners exists, so its new event goes
	// out before it runs, as Salt's low() fires it (an orchestration's
	// args events come after it).
	_, ext := m.o.Runners[fun]
	if ext {
		m.bus.Fire("salt/run/"+jid+"/new", data.Copy())
	}
	ret, err := m.Runner(ctx, fun, args, kw)
	var nr *NoRunnerError
	if errors.As(err, &nr) && verify {
		return nil, nil, err
	}
	if !ext {
		m.bus.Fire("salt/run/"+jid+"/new", data.Copy())
	}
	if err != nil {
		// Salt's low() turns the exception into the return.
		data.Set("return", "Exception occurred in runner "+fun+": "+err.Error())
		if nr != nil {
			data.Set("return", nr.Error()+".")
		}
		data.Set("success", false)
		data.Set("retcode", 1)
	} else {
		data.Set("return", ret)
		data.Set("success", runnerSuccess(ret))
	}
	if v, set := m.o.Raw.Get("runner_returns"); !set || modules.Truthy(v) {
		m.storeRunnerJob(ctx, jid, data)
	}
	m.bus.Fire("salt/run/"+jid+"/ret", data)
	return data, ret, err
}

// storeRunnerJob saves the load store_job saves for a runner job: the
// master's id as id and tgt, the job data as return, fun and user
// copied up, no arg and no tgt_type (so format_job_instance shows []
// and "list"); and the data as the master's return.
func (m *Master) storeRunnerJob(ctx context.Context, jid string, data *ordered.Map) {
	id := m.ID()
	load := ordered.FromPairs("id", id, "tgt", id, "jid", jid, "return", data,
		"fun", data.Value("fun"), "user", data.Value("user"))
	st := m.store()
	ok, _ := data.Value("success").(bool)
	r := &protocol.Return{ID: id, JID: jid, Fun: ordered.KeyString(data.Value("fun")), Return: data, Success: ok}
	if !ok {
		r.Retcode = 1
	}
	if js, both := st.(jobcache.JobSaver); both {
		if err := js.SaveJob(ctx, jid, load, r.SaltMap()); err != nil {
			m.log.Error("Could not store job cache info. Job details for this run may be unavailable.", logattr.JID, jid, logattr.Err, err)
		}
		return
	}
	if err := st.SaveLoad(ctx, jid, load, nil); err != nil {
		m.log.Error("Could not store job cache info. Job details for this run may be unavailable.", logattr.JID, jid, logattr.Err, err)
		return
	}
	if err := st.Returner(ctx, r.SaltMap()); err != nil {
		m.log.Error("Could not store job cache info. Job details for this run may be unavailable.", logattr.JID, jid, logattr.Err, err)
	}
}

// ID is the master's id: the id option, else the host name with
// "_master" appended (salt/config/__init__.py apply_master_config).
func (m *Master) ID() string {
	if id, _ := m.o.Raw.Value("id").(string); id != "" {
		return id
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "localhost"
	}
	return h + "_master"
}
