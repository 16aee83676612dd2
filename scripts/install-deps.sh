#!/usr/bin/env bash
# install-deps.sh: install what Brine's builds, end-to-end tests and demo need
# on a Debian 12 machine, as root. Idempotent: when everything is present it
# changes nothing, prints nothing and takes well under a second.
#
#   scripts/install-deps.sh           test-host harness (sshd, ssh, sudo, ip, ...), pyzmq
#   scripts/install-deps.sh --bench   also ansible-core and hyperfine (bench/)
#   scripts/install-deps.sh --interop also the Python modules Salt 3006 needs to run from its
#                                     source by hand (docs/INTEROP.md); Salt itself is never installed
#
# The system's own sshd service is never started or needed: the test-host
# harness (internal/testsupport/testhosts) runs its own sshd processes with their own
# configs. Only the privilege-separation directory /run/sshd must exist.
set -euo pipefail

bench=0
interop=0
for arg in "$@"; do
	case "$arg" in
	--bench) bench=1 ;;
	--interop) interop=1 ;;
	-h | --help)
		sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "install-deps.sh: unknown argument: $arg" >&2
		exit 64
		;;
	esac
done

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: must run as root" >&2
	exit 77
fi

# A package counts as present when dpkg says it is installed.
# python3-zmq: pyzmq (libzmq) peers for internal/transport's interop tests.
# openssl: the test-host harness hashes custom login passwords (openssl passwd -6).
# curl: salt-api's end-to-end tests (cmd/salt-api) drive the odd corners with it.
# rpm, createrepo-c: `make repo`'s YUM repodata and the package tests
# (internal/tools/pkgtool: rpm -qp, rpm --root); gpgv: apt-get's check of
# the signed test repository (usually there with apt).
# mariadb-server, postgresql: the throwaway database servers of the job
# cache tests (internal/testsupport/dbtest starts its own mariadbd and
# postgres in temporary directories; the packages' services stay stopped).
pkgs=(openssh-server openssh-client sudo iproute2 util-linux procps python3 python3-zmq passwd zstd gzip openssl curl
	rpm createrepo-c gpgv mariadb-server mariadb-client postgresql)
# libpam0g-dev, gcc: salt-master's pam eauth (internal/eauth/pam) is built
# with cgo against libpam, and its tests authenticate a real user.
pkgs+=(libpam0g-dev gcc)
# rsync: bench/relaypush's rsync-over-ssh loop (issue 18).
pkgs+=(rsync)
# salt-api's client tests (cmd/salt-api/apiclients): the seed's Python
# requests client (python3-requests), Debian's pepper 0.5.5 (salt-pepper)
# and headless Chromium for an EventSource on /events.
pkgs+=(python3-requests salt-pepper chromium)
# Windows minions (docs/WINDOWS.md): wine64 runs salt-minion.exe and the
# Windows packages' tests; wine holds the wine, wineboot and wineserver
# commands on PATH (wine64 alone, without its recommends, has only
# /usr/lib/wine/wine64); gcc-mingw-w64-x86-64 builds the ProcessPrng
# shim DLL Wine 8.0 lacks (internal/testsupport/winetest), xvfb and
# xdotool give session mode's GUI test a display and find its window.
pkgs+=(wine wine64 gcc-mingw-w64-x86-64 xvfb xdotool)
if [ "$bench" -eq 1 ]; then
	# python3-psycopg2, python3-mysqldb: Salt's own database returners'
	# drivers, for bench/minionswarm/saltret.py (Salt's per-return inserts).
	pkgs+=(ansible-core hyperfine python3-psycopg2 python3-mysqldb)
fi
if [ "$interop" -eq 1 ]; then
	# Salt's own imports (requirements/base.txt) for docs/INTEROP.md's
	# "Reproducing by hand"; no Salt package, no Salt code.
	pkgs+=(python3-msgpack python3-yaml python3-jinja2 python3-cryptography python3-pycryptodome python3-distro
		python3-psutil python3-requests python3-packaging python3-markupsafe python3-setproctitle)
fi

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	# Keep maintainer scripts from starting the distribution's sshd (port 22
	# on the root namespace) on machines without systemd.
	policy=/usr/sbin/policy-rc.d
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 0755 "$policy"
		trap 'rm -f "$policy"' EXIT
	fi
	# Update the lists only when they are absent or older than a day, or when
	# the install fails on stale lists.
	lists=/var/lib/apt/lists
	if [ -z "$(find "$lists" -maxdepth 1 -name '*_Packages*' -mtime -1 -print -quit 2>/dev/null)" ]; then
		apt-get update -qq >/dev/null
	fi
	if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/install-deps.$$.log 2>&1; then
		apt-get update -qq >/dev/null
		if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/install-deps.$$.log 2>&1; then
			cat /tmp/install-deps.$$.log >&2
			rm -f /tmp/install-deps.$$.log
			exit 1
		fi
	fi
	rm -f /tmp/install-deps.$$.log
fi

# Installing openssh-server may start the distribution's sshd on port 22 where
# an init system exists; the harness does not need it, so stop it quietly.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
	systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true
	# Likewise the database services: the tests run their own servers.
	systemctl disable --now mariadb.service postgresql.service >/dev/null 2>&1 || true
fi

# sshd refuses to start without its privilege-separation directory, which is
# normally created by the service unit we do not use.
if [ ! -d /run/sshd ]; then
	install -d -m 0755 -o root -g root /run/sshd
fi
