// Package testhosts starts real OpenSSH sshd "hosts" on the local machine for
// Brine's end-to-end tests, `make demo` and the benchmarks.
//
// A Cluster is N hosts named host1…hostN. In ModeNetns (the default when
// running as root with CAP_NET_ADMIN) every host gets:
//
//   - its own network namespace (`brth<C>-host<I>`) joined by a veth pair
//     (`vth<C>h<I>`) to a bridge (`brth<C>`) in the root namespace; the
//     cluster owns the private /24 10.250.<C>.0/24 with the bridge at .1 and
//     hostI at .(I+1); sshd listens on port 22 of that address. A
//     cluster of more than 253 hosts (up to MaxHosts, 1,000) is numbered
//     247–250 and owns 10.<501-C>.0.0/16 instead, its addresses running
//     on past .255; every host's eth0 has a fixed MAC with a permanent
//     neighbour entry on the bridge (whose own MAC is fixed too), so the
//     machine's neighbour table (gc_thresh3, 1024) never overflows and
//     no ARP is needed;
//   - its own mount and UTS namespaces, held open by a small "holder" process,
//     with /etc and /home overlaid (see Login below) and private directories
//     bind-mounted over /tmp, /var/tmp, /etc/salt,
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
// Login: one login user (default "brine") and root accept the cluster's
// client key (KeyPath, Signer). The user exists only inside the hosts: each
// host sees /etc and /home through its own overlayfs, whose upper directory
// holds the machine's passwd, group, shadow and gshadow with the user's
// lines added (password Config.Password, DefaultPassword unless set) and
// the user's home, so the machine's own accounts are never touched and
// clusters with different passwords never race. The user has passwordless
// sudo through the host's private /etc/sudoers.d unless HostOptions say
// otherwise, and HostOptions.PasswordAuth decides whether a host's sshd
// accepts the password.
//
// HostOptions.PrivateSystem adds private overlays of /usr, /opt, /var/lib,
// /var/cache, /var/log, /run (and the rest of systemDirs) to a host, so
// dpkg, apt-get and rpm install, upgrade and purge packages inside it
// without touching the machine (the package tests of internal/tools/pkgtool).
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
