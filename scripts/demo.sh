#!/usr/bin/env bash
# demo.sh BIN DIR: start three throwaway sshd hosts, run salt-ssh against
# them with examples/roster-style settings, print the results, tear down.
set -euo pipefail
bin=$1 dir=$2
rm -rf "$dir"
mkdir -p "$dir/etc"
trap '"$bin/testhosts" down -dir "$dir/hosts" >/dev/null 2>&1 || true' EXIT

"$bin/testhosts" up -n 3 -dir "$dir/hosts"

# A private master config: keys, cache and known_hosts live in the demo dir,
# the roster is the one the harness wrote (same format as examples/roster).
cat >"$dir/etc/master" <<CONF
pki_dir: $dir/pki
cachedir: $dir/cache
known_hosts_file: $dir/hosts/known_hosts
roster_file: $dir/hosts/roster
file_roots:
  base:
    - $PWD/examples/salt
CONF

ssh_() { echo; echo "\$ salt-ssh $*"; "$bin/salt-ssh" -c "$dir/etc" "$@"; }
ssh_ '*' test.ping
ssh_ '*' cmd.run 'uname -r'
ssh_ 'host[12]' grains.get os_family
ssh_ -L host1,host3 test.arg a 1 key=value
ssh_ '*' -r 'id -un; test -x /usr/bin/python3 && echo python present || echo no python needed'
ssh_ '*' test.ping --out json --static
ssh_ -G 'os_family:Debian' grains.item osfinger num_cpus
ssh_ 'host1' state.apply test=True --state-output terse
ssh_ '*' state.apply
echo
echo "demo: a second state.apply changes nothing:"
"$bin/salt-ssh" -c "$dir/etc" '*' state.apply --out json --static |
	python3 -c 'import json,sys; print({h: sum(1 for s in v.values() if s["changes"]) for h, v in json.load(sys.stdin).items()})'
echo
echo "demo: thin binaries were sent once; later runs reuse them (-v timings):"
"$bin/salt-ssh" -c "$dir/etc" -v '*' test.ping 2>&1 >/dev/null | sed 's/^/  /'
