// Package thin is the remote runtime Brine ships to targets in place of
// salt-ssh's Python thin tarball: one static binary with subcommands.
// `call` reads a frame.Job on stdin, runs the execution function through
// the module registry and writes one frame.Result on stdout, the way
// salt-call --local --retcode-passthrough runs under salt-ssh's shim.
//
// The binary must stay free of transport code: it never links
// golang.org/x/crypto/ssh or github.com/pkg/sftp (see deps_test.go).
package thin
