// Package grains gathers Salt's core grains natively: facts about the host
// read from /proc, /sys, /etc and system calls, with the names and value
// shapes of Salt's salt/grains/core.py, extra.py, disks.py, zfs.py and
// minion_process.py as Salt 3006 reports them on Linux.
//
// Gather never spawns processes for the common grains; the few that Salt
// gets from a command (osarch from dpkg, systemd's feature string) are
// derived from files where possible. The zfs grains (salt/grains/zfs.py)
// run what Salt's run: `man -w zpool-features` when man is installed,
// and `zpool list` on a host with ZFS. File reads go through a root
// directory so tests can feed a fake /proc and /etc.
//
// Custom grains follow Salt's loader order (salt/loader grains()): core
// grains, then the grains file (<config_dir>/grains, extra.config), then
// the `grains:` minion option, each replacing top-level keys.
package coregrains
