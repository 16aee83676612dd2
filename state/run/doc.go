// Package run executes compiled low chunks as salt/state.py State does
// (3006): chunks run in order, and a chunk whose requisites have not run
// pulls them forward first; requisite results decide whether a chunk runs,
// is skipped, fires its mod_watch or fails; `listen` appends mod_watch
// runs at the end. `parallel: True` states run in their own goroutines
// and are waited for by the states that require them; mod_aggregate
// folds chunks together when state_aggregate asks for it; functions
// listed in the state_runs_disabled grain fail without running.
package run
