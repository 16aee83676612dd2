// Package testhosts starts real OpenSSH sshd "hosts" on the local machine for
// Brine's end-to-end tests, `make demo` and the benchmarks.
//
// A Cluster is N hosts named host1…hostN. In ModeNetns (the default when
// running as root with CAP_NET_ADMIN) every host gets:
//
//   - its own network namespace (`brth<C>-host<I>`) joined by a veth pair
//     (`vth<C>h<I>`) to a bridge (`brth<C>`) in the root namespace; the
//     cluster owns the private /24 10.250.<C>.0/24 with the bridge at .1 and
//     hostI at .(I+1); sshd listens on port 22 of that address;
//   - its own mount and UTS namespaces, held open by a small "holder" process,
//     with private directories bind-mounted over /tmp, /var/tmp, /etc/salt,
//     /root, the login user's home, /etc/sudoers.d and /etc/hosts, and what
//     a promoted minion uses (/usr/local/sbin, /etc/init.d, /etc/rc?.d,
//     /etc/systemd/system, /run/salt, /var/log/salt, /var/cache/salt), and the
//     hostname set to the host ID; sshd runs inside all three namespaces, so
//     a file one host writes to /var/tmp is invisible on every other host;
//   - its own ed25519 host key, an sshd_config whose AuthorizedKeysFile is the
//     host's own file (then ~/.ssh/authorized_keys), StrictModes no, UsePAM no,
//     PermitRootLogin prohibit-password, and a per-host log file.
//
// The cluster number C comes from /run/brine-testhosts/, allocated under a
// lock file, so test packages running in parallel never collide; resources
// left by a crashed run (recognised by name prefix and by a state file whose
// owner process is dead) are removed by Cleanup, which every New also runs.
//
// Without the privileges for network namespaces, ModeLoopback puts every host
// on 127.0.0.1 with its own port; as root the hosts still get their private
// mount namespaces, otherwise (Isolated reports false) sshd runs as the
// current user without any isolation, and HostOptions that need root are
// refused.
//
// Login: one login user (default "brine", created with useradd when missing)
// and root accept the cluster's client key (KeyPath, Signer). The user has
// passwordless sudo through the host's private /etc/sudoers.d unless
// HostOptions say otherwise. Because /etc/shadow is shared by all hosts and
// all clusters, a password belongs to the user, not to a host: the harness
// always sets the user's password to Config.Password (DefaultPassword unless
// set), and HostOptions.PasswordAuth only decides whether that host's sshd
// accepts it. A cluster that wants another password must also use another
// login user, or it would race with concurrent clusters.
//
// HostOptions.BehindHost hides a host behind another (a point-to-point
// veth between their namespaces, no route from anywhere else), so ProxyJump
// chains are tested for real; HostOptions.HostCert gives a host an OpenSSH
// host certificate signed by the cluster's CA (HostCA) for @cert-authority.
//
// Tests use New(t, n, opts...), which registers teardown with t.Cleanup and
// skips loudly when the machine cannot give the cluster asked for (no sshd;
// no network namespaces for WithMode(ModeNetns) or BehindHost; no root for
// HostOptions that need it); with BRINE_REQUIRE_HOSTS=1 (set by `make test`
// and CI) that skip is a failure instead, and the default mode needs
// network namespaces too. Every other skip of an end-to-end test goes
// through Skip (or RequireRoot, RequireNetns), which obeys the same
// variable; never call t.Skip for a missing capability. Programs use Start
// and Close, or the
// testhosts command (cmd/testhosts) which leaves a detached cluster running
// and records it in a directory for Load.
package testhosts
