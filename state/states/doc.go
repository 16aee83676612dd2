// Package states is the registry of state modules: Salt's `module.function`
// state names (test.nop, cmd.run, file.managed, …) bound to Go functions
// with Python-like signatures. Arguments are bound from a low chunk the
// way salt/utils/args.py format_call does it for salt/state.py State.call:
// named parameters come from the chunk's keys, Salt's internal keywords are
// never passed, and the other keys go to **kwargs or, for a function
// without **kwargs, abort the whole call (notes item 23).
//
// State packages register themselves from init() into Default; tests
// build a fresh Registry with NewRegistry.
package states
