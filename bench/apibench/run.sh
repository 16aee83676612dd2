#!/usr/bin/env bash
# bench/apibench/run.sh [SALT_SRC]: salt-api side by side, as root, on loopback.
#
# Runs in a private mount namespace whose /etc is an overlay, so the PAM
# user it makes (useradd, chpasswd) never reaches the machine. For each
# column it starts a master, a salt-api over HTTPS with a self-signed
# certificate, and 100 Brine minions in one process (apibench
# -serve-swarm), then apibench's load generator in another process.
#
# The Brine column always runs. With SALT_SRC (a directory holding Salt's
# salt/ and scripts/, run with Debian's /usr/bin/python3, as
# docs/INTEROP.md describes; nothing here installs it) the same run
# measures Salt's master and rest_cherrypy salt-api with the same
# minions, user and load (PYTHONPATH may add docs/INTEROP.md's shims).
# Extra apibench flags come from $APIBENCH_FLAGS; APIBENCH_COLUMNS=salt
# runs the Salt column alone, APIBENCH_THREADS sets rest_cherrypy's
# thread_pool (Salt's default 100 holds at most 100 /events streams),
# APIBENCH_TMPFS_CACHE=1 puts each master's cachedir (the job cache) on a
# tmpfs of this namespace. APIBENCH_MASTER_OPTS is YAML appended to both
# masters' config (e.g. "sign_pub_messages: False"), APIBENCH_SWARM_FLAGS
# go to the swarm (-zmq-filtering, -unsigned): the floors of
# docs/BENCHMARKS.md taken away one at a time.
set -euo pipefail
salt_src=${1:-}
repo=$(cd "$(dirname "$0")/../.." && pwd)

if [ "${APIBENCH_NS:-}" != 1 ]; then
	[ "$(id -u)" -eq 0 ] || { echo "run.sh: must run as root" >&2; exit 77; }
	exec env APIBENCH_NS=1 unshare --mount --propagation private "$0" "$@"
fi

work=$(mktemp -d /var/tmp/apibench.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	umount /etc 2>/dev/null || true
	# Salt's daemons' children may still be writing for a moment.
	rm -rf "$work" 2>/dev/null || { sleep 3; rm -rf "$work"; }
}
trap cleanup EXIT

# The PAM user lives only in this namespace's /etc.
mkdir -p "$work/etc/upper" "$work/etc/work"
mount -t overlay apibench -o "lowerdir=/etc,upperdir=$work/etc/upper,workdir=$work/etc/work" /etc
user=apibench
useradd -M -s /usr/sbin/nologin "$user"
umask 077
openssl rand -hex 16 >"$work/pass"
printf '%s:%s\n' "$user" "$(cat "$work/pass")" | chpasswd

cd "$repo"
go build -o "$work/bin/" ./cmd/salt-master ./bench/apibench
[ "${APIBENCH_COLUMNS:-}" = salt ] || go build -o "$work/bin/" ./cmd/salt-api
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# conf DIR PUB RET API: a master config both Brine and Salt read.
conf() {
	mkdir -p "$1"
	cat >"$1/master" <<EOF
interface: 127.0.0.1
publish_port: $2
ret_port: $3
root_dir: $1
pki_dir: $1/pki
cachedir: $1/cache
sock_dir: $1/sock
log_file: $1/master.log
key_logfile: $1/key.log
api_logfile: $1/api.log
api_pidfile: $1/api.pid
pidfile: $1/master.pid
file_roots: {base: [$1/srv]}
pillar_roots: {base: [$1/pillar]}
auto_accept: True
user: root
external_auth:
  pam:
    $user: ['.*', '@runner', '@wheel', '@jobs']
netapi_enable_clients: [local, local_async, local_batch, local_subset, runner, runner_async, wheel, wheel_async, ssh]
rest_cherrypy:
  port: $4
  host: 127.0.0.1
  ssl_crt: $work/cert.pem
  ssl_key: $work/key.pem
  thread_pool: ${APIBENCH_THREADS:-100}
${APIBENCH_MASTER_OPTS:-}
EOF
}

# column LABEL MASTER-CMD API-CMD: start master, salt-api and the swarm,
# run the load, stop them.
column() {
	local label=$1 master=$2 api=$3 dir="$work/$1" pub ret apiport
	pub=$(port) ret=$(port) apiport=$(port)
	conf "$dir" "$pub" "$ret" "$apiport"
	if [ -n "${APIBENCH_TMPFS_CACHE:-}" ]; then
		# The job cache in memory: what is left is the API and the master.
		mkdir -p "$dir/cache" && mount -t tmpfs apibench-cache "$dir/cache"
	fi
	$master -c "$dir" -l warning >"$dir/master.out" 2>&1 &
	pids+=($!)
	sleep 3
	$api -c "$dir" -l warning >"$dir/api.out" 2>&1 &
	pids+=($!)
	# The swarm runs until its stdin (this fifo's writer) closes.
	mkfifo "$dir/swarm.in"
	# shellcheck disable=SC2086
	"$work/bin/apibench" -serve-swarm ${APIBENCH_SWARM_FLAGS:-} -minions 100 -master 127.0.0.1 -ret "$ret" -pub "$pub" <"$dir/swarm.in" 2>"$dir/swarm.out" &
	local swarm=$!
	exec 9>"$dir/swarm.in"
	for _ in $(seq 60); do
		curl -ks "https://127.0.0.1:$apiport/" >/dev/null && break
		sleep 1
	done
	if [ -n "${APIBENCH_HOLD:-}" ]; then
		echo "holding $label: https://127.0.0.1:$apiport user $user, password in $work/pass, dir $dir; remove $work/hold to go on" >&2
		touch "$work/hold"
		while [ -e "$work/hold" ]; do sleep 1; done
	fi
	# shellcheck disable=SC2086
	"$work/bin/apibench" -label "$label" -url "https://127.0.0.1:$apiport" -user "$user" -pass-file "$work/pass" -eauth pam ${APIBENCH_FLAGS:-} ||
		{ tail -20 "$dir"/*.out "$dir"/*.log >&2 2>/dev/null; }
	exec 9>&-
	wait "$swarm" 2>/dev/null || true
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	pids=()
	umount "$dir/cache" 2>/dev/null || true
}

echo "# salt-api — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| column | measure | figure | notes |"
echo "|---|---|---|---|"
if [ "${APIBENCH_COLUMNS:-brine salt}" != salt ]; then
	column brine "$work/bin/salt-master" "$work/bin/salt-api"
fi
if [ -n "$salt_src" ]; then
	export PYTHONPATH="$salt_src${PYTHONPATH:+:$PYTHONPATH}"
	column salt "/usr/bin/python3 $salt_src/scripts/salt-master" "/usr/bin/python3 $salt_src/scripts/salt-api"
fi
