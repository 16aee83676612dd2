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
// Authentication tries, in OpenSSH's order: Signers, the Priv files (each
// preceded by its certificate, "<priv>-cert.pub" or a CertificateFiles
// entry, presented with ssh.NewCertSigner), the ssh-agent's keys
// (AgentSocket; with IdentitiesOnly only those whose public half is a
// configured identity, and an encrypted Priv file whose ".pub" the agent
// holds is signed by the agent), then the password and keyboard-interactive
// prompts answered with it. Failures are typed: *AuthError with a Reason
// (keys rejected, wrong password, account locked), *KeyError (unreadable
// key), *PassphraseError, *AgentError (ErrNoAgentKeys).
//
// Jumps is a ProxyJump chain: each hop is dialled through the previous
// client (a direct-tcpip channel), with its own host key check; a hop that
// fails is a *JumpError naming it, and a host repeated in the chain is
// ErrJumpLoop. ParseProxyJump reads OpenSSH's syntax.
//
// Host keys are looked up in KnownHostsFile and the read-only
// GlobalKnownHostsFiles (/etc/ssh/ssh_known_hosts), plain or hashed
// (|1|…) entries, @revoked, and @cert-authority for host certificates; a
// certificate from an unknown CA is judged by its plain key, as OpenSSH
// does. x/crypto's knownhosts compares ports exactly, so a CA line for a
// host on a port other than 22 must name "[host]:port".
//
// LoadSSHConfig reads ~/.ssh/config (kevinburke/ssh_config plus Include,
// Match and token expansion) and SSHConfig.Lookup answers for one host.
// salt-ssh (cmd/salt-ssh/dial.go) layers the settings as OpenSSH does,
// first value winning:
//
//  1. explicit roster and command-line values: host, port and user when
//     they differ from the defaults (22, root) or come from ssh_port,
//     ssh_user or --user; priv, passwd, priv_passwd, timeout, -i and
//     --no-host-keys, the master's known_hosts_file;
//  2. ssh_options and --ssh-option ("Key=Value", like ssh -o): Port, User,
//     IdentityFile, IdentitiesOnly, CertificateFile, ProxyJump,
//     StrictHostKeyChecking, UserKnownHostsFile, ConnectTimeout (this one
//     over the roster's timeout), ServerAliveInterval, ServerAliveCountMax;
//     other keys are warned about once and ignored;
//  3. ssh_config_file (default ~/.ssh/config) looked up by the roster's
//     host: HostName, Port, User, IdentityFile, CertificateFile,
//     IdentitiesOnly, ProxyJump, UserKnownHostsFile, GlobalKnownHostsFile,
//     StrictHostKeyChecking, HashKnownHosts, ServerAliveInterval,
//     ServerAliveCountMax;
//  4. defaults: port 22, user root, the roster keepalive (60 s, 3 misses).
//
// IdentityFile values accumulate (priv first, then ssh_options, then
// ssh_config; missing files skipped), and the ssh-agent (SSH_AUTH_SOCK) is
// offered after them. StrictHostKeyChecking yes/ask is HostKeyStrict,
// accept-new/no/off is HostKeyAcceptNew (a changed key is always
// refused). Each ProxyJump hop is looked up in ssh_config too (its own
// ProxyJump is prepended), logs in as the hop's user (ProxyJump user,
// ssh_config User, else the local user) with the target's keys but never
// its password, and is checked against the same known_hosts.
//
// DeployKey appends a public key to the login user's authorized_keys
// (Salt's --key-deploy).
package sshconn
