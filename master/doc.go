// Package master is salt-master over ZeroMQ (salt/master.py,
// salt/channel/server.py): the _auth handshake with the key directories
// of internal/pki, the publish channel carrying signed, AES-encrypted
// jobs, the request channel where minions send returns and ask for
// pillar and files, the job cache, the minion data cache, the event bus
// and the local socket salt and salt-run use.
package master
