#!/usr/bin/env bash
# bench/run.sh BIN: side-by-side benchmarks on real sshd test hosts.
# Prints Markdown tables; docs/BENCHMARKS.md records a run with its date.
set -euo pipefail
bin=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
go build -o "$bin/gofloor" ./bench/gofloor
go build -o "$bin/sshbench" ./bench/sshbench
echo "# salt-ssh side by side — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "thin binaries: full $(stat -c %s "$bin"/salt-thin-linux-amd64), core $(stat -c %s "$bin"/salt-thin-core-linux-amd64) bytes on disk (each table says what went on the wire)"
"$bin/sshbench" -hosts "${BENCH_HOSTS:-10,50,100}" -bin "$bin" -floor "$bin/gofloor" \
	-reps "${BENCH_REPS:-5}" -ansible-reps "${BENCH_ANSIBLE_REPS:-3}"

# Masterless highstate, grains and matching, state.apply and file push
# side by side with Ansible (each prints its own Markdown table).
for b in highstate grainsmatch stateapply filepush; do go build -o "$bin/$b" "./bench/$b"; done
echo
"$bin/highstate" -bin "$bin" -reps "${BENCH_REPS:-5}"
echo
"$bin/grainsmatch"
echo
"$bin/stateapply" -hosts "${BENCH_APPLY_HOSTS:-50}" -P "${BENCH_APPLY_P:-50}" -bin "$bin" \
	-reps "${BENCH_REPS:-5}" -ansible-reps "${BENCH_ANSIBLE_REPS:-3}"
echo
"$bin/filepush" -hosts "${BENCH_APPLY_HOSTS:-50}" -P "${BENCH_APPLY_P:-50}" -bin "$bin" \
	-reps "${BENCH_PUSH_REPS:-3}" -ansible-reps "${BENCH_ANSIBLE_REPS:-3}"

# salt-api: Brine's, and Salt's when SALT_SRC names Salt's source (docs/INTEROP.md).
echo
bench/apibench/run.sh "${SALT_SRC:-}"

# salt-ssh at 100, 300 and 1,000 hosts (issue 18): opt in with
# BENCH_SCALE=1; it boots a 1,000-host cluster (about 2 GB of memory and
# 4 GB of disk once the thin binaries are on the hosts, see
# docs/BENCHMARKS.md).
if [ "${BENCH_SCALE:-0}" = 1 ]; then
	go build -o "$bin/sshscale" ./bench/sshscale
	echo
	"$bin/sshscale" -hosts "${BENCH_SCALE_HOSTS:-100,300,1000}" -P "${BENCH_SCALE_P:-100,500}" -bin "$bin" \
		-floor "$bin/gofloor" -reps "${BENCH_REPS:-3}"
fi
