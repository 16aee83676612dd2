// Package sshexec is Brine's agentless executor, the heart of salt-ssh:
// for every roster target, in a sliding window of --max-procs, it opens
// one SSH connection (package sshconn), makes sure the thin binary of
// this build is in the host's thin_dir, runs the job there with the job
// on stdin, and reads back one framed result (package thin/frame).
//
// Round trips per host: a warm host costs one exec session, which both
// checks for the thin binary and runs it. A cold host costs one more: the
// first session reports the architecture and creates thin_dir, the
// binary goes over SFTP (gzip-compressed when the host has gzip), and a
// second session unpacks, verifies and runs it. Salt's salt-ssh needs
// three ssh/scp process launches for the same (salt/client/ssh/__init__.py,
// Single.cmd_block).
//
// A host that fails — unreachable, refusing the key, a changed host key,
// sudo refused, a dropped connection — yields a Result with its own
// retcode; the other hosts carry on.
package sshexec
