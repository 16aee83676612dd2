// Package reactor is Salt's reactor (salt/utils/reactor.py): the
// master's `reactor:` option maps event tag globs to SLS files; an event
// whose tag matches has those files rendered with `tag` and `data`
// (Jinja, then YAML, as any SLS), compiled to low chunks and each chunk
// run as a local, runner, wheel or caller reaction.
//
// The bus is never blocked: Submit only matches the tag and queues the
// event for a pool of reactor_worker_threads workers, which render and
// run it; a queue holding reactor_worker_hwm events refuses more, and
// each refused event is counted and logged as Salt's ThreadPool logs
// "TaskPool queue is full!". Salt renders in the reactor process's own
// loop and pools only runner and wheel reactions; here rendering and
// every kind of reaction happen in the pool, so a slow render or a
// slow publish never holds up the tag matching.
//
// The master runs the reactions (Executor): this package only decides
// what to run and with which arguments (ReactWrap.run's argument
// handling, old and new style).
package reactor
