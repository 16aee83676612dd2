// Package pki manages Salt's key directories: the master's pki_dir
// (master.pem/.pub and the minions, minions_pre, minions_rejected,
// minions_denied and minions_autosign directories) with the key states
// and transitions of salt/key.py and the acceptance rules the master
// applies on _auth (salt/channel/server.py, salt/daemons/masterapi.py
// AutoKey), and the minion's pki_dir (minion.pem/.pub,
// minion_master.pub). Writes are atomic and a Master is safe for
// concurrent use.
package pki
