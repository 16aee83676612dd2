#!/bin/sh -
# bootstrap-salt.sh for Brine: installs the Salt minion (and with -M the
# master, with -S the syndic) from Brine's package repository, writes the
# minion's master and id, and enables and starts the services. It takes
# the most used options of Salt's bootstrap-salt.sh, with the same
# letters and meanings:
#
#   sh bootstrap-salt.sh -R https://repo.example.com/brine -A salt.example.com -i web1
#   sh bootstrap-salt.sh -R URL -M -N          # a master only
#   sh bootstrap-salt.sh -R URL stable 0.3.0   # a given version
#
# Options Brine cannot honour are refused by name, never ignored. Over
# plain HTTP the repository's signing key is trusted as first served: use
# HTTPS, or give the key in BOOTSTRAP_REPO_KEY (a file).
set -eu

__ScriptName=bootstrap-salt.sh
__Version=2026.12.02-brine

usage() {
	cat <<EOF
Usage: sh $__ScriptName [options] [stable [version]]

  -R URL   the Brine package repository (its root: dists/, rpm/, keys)
  -r       configure no repository: install from the ones already set up
  -A HOST  the master the minion connects to (minion.d/99-master-address.conf)
  -i ID    the minion's id (minion.d/99-minion-id.conf)
  -M       also install salt-master
  -S       also install salt-syndic
  -N       do not install salt-minion
  -X       install, but do not enable or start the daemons
  -F       overwrite configuration files this script wrote before
  -C       only write the configuration (no install; implies -F)
  -P       accepted for compatibility: Brine's packages need no pip
  -D       show what runs (set -x)
  -n       no colours (the output has none)
  -q       quiet
  -v       print the script's version
  -h       this help
EOF
}

echoerr() { printf '%s\n' "* ERROR: $*" >&2; }
echoinfo() { [ "$_QUIET" = 1 ] || printf '%s\n' " *  INFO: $*"; }
die() {
	echoerr "$*"
	exit 1
}

_REPO_URL=
_CONFIGURE_REPO=1
_MASTER_ADDRESS=
_MINION_ID=
_INSTALL_MASTER=0
_INSTALL_SYNDIC=0
_INSTALL_MINION=1
_START_DAEMONS=1
_FORCE_OVERWRITE=0
_CONFIG_ONLY=0
_QUIET=0
_ETC=/etc/salt

while getopts ':hvnDqR:rA:i:MSNXFCPLUJ:j:x:' opt; do
	case "$opt" in
	h) usage; exit 0 ;;
	v) echo "$__ScriptName -- Version $__Version"; exit 0 ;;
	n) ;;
	D) set -x ;;
	q) _QUIET=1 ;;
	R) _REPO_URL=${OPTARG%/} ;;
	r) _CONFIGURE_REPO=0 ;;
	A) _MASTER_ADDRESS=$OPTARG ;;
	i) _MINION_ID=$OPTARG ;;
	M) _INSTALL_MASTER=1 ;;
	S) _INSTALL_SYNDIC=1 ;;
	N) _INSTALL_MINION=0 ;;
	X) _START_DAEMONS=0 ;;
	F) _FORCE_OVERWRITE=1 ;;
	C) _CONFIG_ONLY=1; _FORCE_OVERWRITE=1 ;;
	P) echoinfo "-P: pip is never needed, Brine's packages have no Python dependencies" ;;
	L) die "-L: Brine has no salt-cloud package" ;;
	U) die "-U: upgrading the whole system is left to the system's package manager" ;;
	J | j) die "-$opt: JSON configuration is not supported; put the settings in $_ETC/master.d or $_ETC/minion.d" ;;
	x) die "-x: Brine's packages do not use Python" ;;
	:) echoerr "option -$OPTARG needs an argument"; usage >&2; exit 1 ;;
	*) echoerr "invalid option: -$OPTARG"; usage >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))

_INSTALL_TYPE=${1:-stable}
_VERSION=${2:-}
case "$_INSTALL_TYPE" in
stable) ;;
*) die "install type '$_INSTALL_TYPE': Brine installs from packages (stable [version]) only" ;;
esac
if [ $# -gt 2 ]; then
	die "too many arguments: $*"
fi
if [ "$(id -u)" -ne 0 ]; then
	die "$__ScriptName must run as root"
fi

# The package family, and whether systemd runs (sd_booted).
if command -v apt-get >/dev/null 2>&1; then
	_FAMILY=deb
elif command -v dnf >/dev/null 2>&1; then
	_FAMILY=rpm _YUM=dnf
elif command -v yum >/dev/null 2>&1; then
	_FAMILY=rpm _YUM=yum
else
	die "neither apt-get nor yum/dnf found: no supported package manager"
fi
_SYSTEMD=0
[ -d /run/systemd/system ] && _SYSTEMD=1

fetch() { # url file
	if command -v curl >/dev/null 2>&1; then
		curl -fsSL -o "$2" "$1"
	elif command -v wget >/dev/null 2>&1; then
		wget -q -O "$2" "$1"
	else
		die "neither curl nor wget found to fetch $1"
	fi
}

repo_key() { # destination
	if [ -n "${BOOTSTRAP_REPO_KEY:-}" ]; then
		install -m 0644 "$BOOTSTRAP_REPO_KEY" "$1"
	else
		fetch "$_REPO_URL/$2" "$1"
	fi
}

configure_repo() {
	[ "$_CONFIGURE_REPO" = 1 ] || return 0
	[ -n "$_REPO_URL" ] || die "no repository: give its URL with -R, or -r to use the repositories already configured"
	if [ "$_FAMILY" = deb ]; then
		mkdir -p /etc/apt/keyrings
		repo_key /etc/apt/keyrings/brine-archive-keyring.gpg brine-archive-keyring.gpg
		echo "deb [signed-by=/etc/apt/keyrings/brine-archive-keyring.gpg] $_REPO_URL stable main" >/etc/apt/sources.list.d/brine.list
		echoinfo "APT repository $_REPO_URL configured"
	else
		mkdir -p /etc/pki/rpm-gpg
		repo_key /etc/pki/rpm-gpg/RPM-GPG-KEY-brine RPM-GPG-KEY-brine
		cat >/etc/yum.repos.d/brine.repo <<EOF
[brine]
name=Brine
baseurl=$_REPO_URL/rpm
enabled=1
gpgcheck=0
repo_gpgcheck=1
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-brine
EOF
		echoinfo "YUM repository $_REPO_URL/rpm configured"
	fi
}

# packages lists what to install, pinned to _VERSION when given.
packages() {
	list=
	[ "$_INSTALL_MASTER" = 1 ] && list="$list salt-master"
	[ "$_INSTALL_SYNDIC" = 1 ] && list="$list salt-syndic"
	[ "$_INSTALL_MINION" = 1 ] && list="$list salt-minion"
	[ -n "$list" ] || die "nothing to install (-N without -M or -S)"
	if [ -n "$_VERSION" ]; then
		pinned=
		for p in $list; do
			if [ "$_FAMILY" = deb ]; then pinned="$pinned $p=1:$_VERSION"; else pinned="$pinned $p-$_VERSION"; fi
		done
		list=$pinned
	fi
	echo "$list"
}

install_packages() {
	pkgs=$(packages)
	echoinfo "installing$pkgs"
	if [ "$_FAMILY" = deb ]; then
		apt-get update -q
		# Pinning a version may mean a downgrade, and salt-common follows.
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --allow-downgrades \
			-o Dpkg::Options::=--force-confold $pkgs
	else
		$_YUM install -y $pkgs
	fi
}

# write_config file content: writes a file this script owns; one that
# exists with other content is kept unless -F.
write_config() {
	mkdir -p "$(dirname "$1")"
	if [ -e "$1" ] && [ "$(cat "$1")" != "$2" ] && [ "$_FORCE_OVERWRITE" != 1 ]; then
		echoerr "not overwriting $1 (use -F)"
		return 0
	fi
	printf '%s\n' "$2" >"$1"
	echoinfo "wrote $1"
}

# The id goes in minion.d as a setting: Brine's minion reads its id from
# the configuration (Salt's bootstrap writes /etc/salt/minion_id, a file
# Brine's minion does not read).
configure_minion() {
	[ -z "$_MASTER_ADDRESS" ] || write_config "$_ETC/minion.d/99-master-address.conf" "master: $_MASTER_ADDRESS"
	[ -z "$_MINION_ID" ] || write_config "$_ETC/minion.d/99-minion-id.conf" "id: $_MINION_ID"
}

# enable_start name: enabled at boot and (re)started, so it reads the
# configuration just written.
enable_start() {
	if [ "$_SYSTEMD" = 1 ]; then
		systemctl enable "$1.service"
		systemctl restart "$1.service"
		return
	fi
	if command -v update-rc.d >/dev/null 2>&1; then
		update-rc.d "$1" enable >/dev/null
	elif command -v chkconfig >/dev/null 2>&1; then
		chkconfig "$1" on
	fi
	if command -v service >/dev/null 2>&1; then
		service "$1" restart
	else
		"/etc/init.d/$1" restart
	fi
}

if [ "$_CONFIG_ONLY" = 0 ]; then
	configure_repo
	install_packages
fi
configure_minion
if [ "$_START_DAEMONS" = 1 ] && [ "$_CONFIG_ONLY" = 0 ]; then
	[ "$_INSTALL_MASTER" = 0 ] || enable_start salt-master
	[ "$_INSTALL_SYNDIC" = 0 ] || enable_start salt-syndic
	[ "$_INSTALL_MINION" = 0 ] || enable_start salt-minion
fi
echoinfo "Salt installed (Brine)"
