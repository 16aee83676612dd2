// Package sshside runs salt-ssh state.apply and its Ansible equivalent
// side by side on the same real sshd test hosts (internal/testsupport/testhosts), for
// the bench/stateapply and bench/filepush drivers: it starts the
// cluster, writes one master config, roster and inventory for both
// tools, times every command as its own process (wall, CPU of the
// process tree, peak RSS, bytes through the cluster's bridge), checks
// each run's output (every host, no failed state or task) and prints
// medians and ratios as a Markdown table.
//
// Every run is bounded by a timeout and the cluster is closed on every
// exit path, including failures and Ctrl-C.
package sshside
