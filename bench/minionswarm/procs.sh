#!/usr/bin/env bash
# bench/minionswarm/procs.sh [N] [ROUNDS]: one real salt-master and N real
# salt-minion processes (own keys, first-time sign-in, auto_accept) on
# loopback. Prints the time until all N answer, the wall time of
# `salt '*' test.ping` from process start to exit for ROUNDS rounds, and
# the resident memory (VmRSS, VmHWM) of the master and of the minions
# after those jobs, idle.
set -euo pipefail
n=${1:-100}
rounds=${2:-5}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /var/tmp/minionprocs.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
cd "$repo"
go build -o "$work/bin/" ./cmd/salt-master ./cmd/salt-minion ./cmd/salt ./cmd/salt-key
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pub=$(port)
ret=$(port)
mkdir -p "$work/master"
cat >"$work/master/master" <<EOF
interface: 127.0.0.1
publish_port: $pub
ret_port: $ret
pki_dir: $work/master/pki
cachedir: $work/master/cache
sock_dir: $work/master/sock
auto_accept: true
timeout: 10
EOF
"$work/bin/salt-master" -c "$work/master" -l warning >"$work/master.log" 2>&1 &
master=$!
pids+=("$master")
until [ -S "$work/master/sock/brine-master.sock" ]; do sleep 0.1; done

rss() { awk '/^VmRSS|^VmHWM/ {printf "%s %d MiB  ", $1, $2/1024}' "/proc/$1/status"; }

start=$(date +%s.%N)
for i in $(seq -w 1 "$n"); do
	d="$work/m$i"
	mkdir -p "$d"
	cat >"$d/minion" <<EOF
master: 127.0.0.1
master_port: $ret
publish_port: $pub
id: m$i
pki_dir: $d/pki
cachedir: $d/cache
acceptance_wait_time: 1
EOF
	"$work/bin/salt-minion" -c "$d" -l warning >"$d/log" 2>&1 &
	pids+=("$!")
done
salt() { "$work/bin/salt" -c "$work/master" "$@"; }
while :; do
	got=$(salt '*' test.ping --out txt -t 10 2>/dev/null | grep -c ': True' || true)
	[ "$got" -ge "$n" ] && break
	sleep 0.5
done
echo "minions=$n all answering after $(echo "$(date +%s.%N) - $start" | bc) s (first-time keys, processes started at once)"
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
	t0=$(date +%s.%N)
	got=$(salt '*' test.ping --out txt | grep -c ': True' || true)
	t1=$(date +%s.%N)
	echo "  salt '*' test.ping round $r: $got returns, wall $(echo "$t1 - $t0" | bc) s"
done
sleep 5
echo "master: $(rss "$master")"
tot=0
max=0
for p in "${pids[@]:1}"; do
	kb=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status")
	tot=$((tot + kb))
	[ "$kb" -gt "$max" ] && max=$kb
done
cat /proc/"${pids[1]}"/smaps_rollup | grep -E "^(Rss|Anonymous|Pss_File|Pss_Anon)" | tr "\n" " "; echo
echo "minions idle after $((rounds + 1))+ jobs: mean VmRSS $((tot / n / 1024)) MiB, max $((max / 1024)) MiB; one minion: $(rss "${pids[1]}")"
