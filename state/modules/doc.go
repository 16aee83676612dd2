// Package modules is the registry of execution modules: Salt's
// `module.function` names (test.ping, cmd.run, grains.get, …) bound to Go
// functions with Python-like signatures, so that argument binding and its
// error messages match Salt's (salt/utils/args.py, salt/minion.py
// load_args_and_kwargs).
//
// Modules register themselves from init() into Default; tests build a
// fresh Registry with NewRegistry and never mutate Default.
package modules
