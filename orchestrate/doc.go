// Package orchestrate is Salt's orchestration on the master: the
// state.orchestrate runner family (salt/runners/state.py: orchestrate with
// its aliases orch and sls, orchestrate_single, orchestrate_high,
// orchestrate_show_sls and orch_show_sls) and the master-side `salt` state
// module (salt/states/saltmod.py: salt.state, salt.function, salt.runner,
// salt.wheel, salt.wait_for_event).
//
// An orchestration SLS is compiled on the master from file_roots with the
// master's own pillar (pillar_roots, with the master minion's id,
// "<id>_master") and run by the ordinary state engine (state/apply,
// state/compile, state/run), so requisites, onfail, parallel, failhard
// and test=True mean what they mean in any state run. The `salt` states
// publish jobs to minions through the master in this process (the
// client package collects their returns, with find_job checks, batches
// and subsets), reach roster hosts through salt-ssh (sshexec/sshrun) for
// `ssh: True`, and run runner and wheel functions as jobs of their own.
//
// The package sits above the executors: master cannot import sshexec, so
// cmd/salt-master hands these runners to the master as Options.Runners.
package orchestrate
