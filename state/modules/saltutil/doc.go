// Package saltutil is Salt's saltutil execution module
// (salt/modules/saltutil.py) as far as it applies to Brine: syncing
// custom grains from the file server, the refresh calls, the running-job
// registry (running, find_job, signal_job and friends) and cache
// clearing.
//
// # Custom grains
//
// Salt's custom grains are Python modules in a _grains/ directory of the
// file server, synced into <extension_modules>/grains/ and imported by
// the loader. Brine cannot import Python, so a _grains/ entry is instead
// an executable (any language, with a #! line) that prints a mapping as
// JSON or YAML on standard output:
//
//	#!/bin/sh
//	echo '{"rack": "r12", "roles": ["web"]}'
//
// saltutil.sync_grains copies every file of _grains/ (not only *.py as
// Salt does) into <extension_modules>/grains/ (extension_modules
// defaults to <cachedir>/extmods), makes it executable and, like Salt,
// removes files no longer on the file server when clean_dynamic_modules
// is on. LoadCustomGrains runs each executable there, sorted by name,
// with CustomGrainTimeout, and merges the mappings top-level as Salt
// merges grain modules without grains_deep_merge. An entry that fails,
// times out or prints something other than a mapping is left out and
// reported in the returned error; the others still apply. Salt's
// Python grain modules do not run this way unless they are executable
// scripts printing JSON.
//
// The other sync_* functions exist with Salt's return shapes and sync
// nothing, because Brine cannot load Python modules, states, renderers
// and the like; sync_modules and sync_states log the files they skip.
//
// # Running jobs
//
// Salt finds running jobs through proc files under <cachedir>/proc.
// Brine keeps them in a Jobs registry instead: whatever runs jobs (the
// thin binary, the minion daemon) adds each job with Jobs.Add and removes
// it when done, and saltutil.running reads the registry. A job added with
// a Cancel function runs in this process and is stopped through it:
// signalling the process would stop every job in it.
package saltutil
