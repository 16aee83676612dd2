// Package minion is salt-minion over ZeroMQ (salt/minion.py,
// salt/channel/client.py, salt/crypt.py AsyncAuth): it signs in to the
// master with its key pair, pins the master's key, subscribes to the
// publish channel, matches each job's target against its own id, grains
// and pillar, runs matching jobs concurrently through thin.Execute and
// sends the returns back, queueing them while the master is away. Jobs
// read salt:// files from the master's file server, cached by hash under
// the cachedir, and compile pillar on the master (files.go); salt-call
// uses the same through Connect. Grains and pillar are kept in memory
// between jobs and refreshed by the jobs that ask for it
// (saltutil.refresh_pillar, grains.setval, ...), grains_refresh_every
// and grains_refresh_pre_exec (refresh.go); each pillar refresh sends
// the grains to the master's data cache.
package minion
