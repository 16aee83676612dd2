package master

import (
	"os"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// TestRunnerJobsListed has salt-run's requests run runners through the
// local socket: each run is a job in the cache with fun runner.<name>,
// the master's id as target and Target-type list, as Salt's
// RunnerClient stores them (salt/client/mixins.py low, salt/utils/job.py
// store_job), so jobs.list_jobs lists it and jobs.lookup_jid returns
// its data under the master's id. A function that does not exist is no
// job.
func TestRunnerJobsListed(t *testing.T) {
	m, ctx := startMaster(t)
	host, _ := os.Hostname()
	masterID := host + "_master" // no id option: Salt's apply_master_config
	cl, err := Dial(ctx, m.o.LocalSocket())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Runner(ctx, "manage.up", nil, ordered.FromPairs("show_ip", false)); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Runner(ctx, "nosuch.fun", nil, nil); err == nil || !strings.Contains(err.Error(), "'nosuch.fun' is not available") {
		t.Fatalf("unknown runner: %v", err)
	}
	v, err := cl.Runner(ctx, "jobs.list_jobs", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _ := v.(*ordered.Map)
	var jid string
	var info *ordered.Map
	jobs.Range(func(k, v any) bool {
		e, _ := v.(*ordered.Map)
		if e.Value("Function") == "nosuch.fun" || e.Value("Function") == "runner.nosuch.fun" {
			t.Errorf("an unknown runner was stored: %v", e)
		}
		if e.Value("Function") == "runner.manage.up" {
			jid, info = ordered.KeyString(k), e
		}
		return true
	})
	if info == nil {
		t.Fatalf("runner.manage.up not in jobs.list_jobs: %v", jobs.Keys())
	}
	if info.Value("Target") != masterID || info.Value("Target-type") != "list" || len(info.Value("Arguments").([]any)) != 0 {
		t.Errorf("list_jobs entry = %v", info)
	}
	v, err = cl.Runner(ctx, "jobs.lookup_jid", []any{jid}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := v.(*ordered.Map).Value(masterID).(*ordered.Map)
	if data == nil || data.Value("fun") != "runner.manage.up" || data.Value("success") != true || data.Value("jid") != jid {
		t.Fatalf("lookup_jid %s = %v", jid, v)
	}
	if args, _ := data.Value("fun_args").([]any); len(args) != 1 {
		t.Errorf("fun_args = %v, want [{show_ip: False}]", data.Value("fun_args"))
	}
}
