// Package sshconn is the SSH transport of salt-ssh: one TCP+SSH connection
// per host (Dial), commands on multiplexed sessions (Run, RunWith, Output),
// atomic SFTP uploads (Upload), known_hosts checking in Salt's three modes,
// and the salt-ssh key pair (EnsureKey, LoadSigners).
//
// Salt shells out to OpenSSH's ssh and scp binaries for every step
// (salt/client/ssh/shell.py), paying a handshake per step; here the
// executor in package sshexec holds one Conn per host for the whole run.
//
// Errors are classified once, here, and callers branch with errors.Is and
// errors.As: ErrConnect, ErrAuthFailed (*AuthError), ErrHostKeyUnknown and
// ErrHostKeyMismatch (*HostKeyError), ErrConnLost, *ExitError and
// *PassphraseError. Messages follow Salt's wording where Salt has one.
//
// Host key modes map salt-ssh options: HostKeyStrict is the default,
// HostKeyAcceptNew is -i/--ignore-host-keys, HostKeyIgnore is
// --no-host-keys. Recording a new key is safe for many concurrent dials
// into one known_hosts file: writers serialise on an in-process mutex per
// path and on flock(2) across processes, and each line is one O_APPEND
// write.
//
// Cancelling a Run sends SIGKILL and closes the session. OpenSSH's sshd
// ignores signal requests on root logins ("session signalling requires
// privilege separation") and leaves a pipe session's command running when
// its channel closes, so a command that must die with its context should
// run with RunOptions.PTY: closing the terminal hangs it up. OpenSSH also
// caps sessions per connection (MaxSessions, default 10).
//
// Not yet here: ssh-agent, ProxyJump and interactive prompts beyond a
// password (Config.Auth accepts caller-built methods meanwhile).
package sshconn
