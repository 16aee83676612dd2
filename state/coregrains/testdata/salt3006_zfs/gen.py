#!/usr/bin/python3
"""Record Salt 3006's zpool grain values: salt.utils.zfs.to_size(size,
False) as salt/grains/zfs.py _zfs_pool_data applies it to the size
column of `zpool list -H -o name,size`.

    PYTHONPATH=<salt v3006.19 checkout>:<shims> /usr/bin/python3 gen.py > sizes.json

Each row is [input, type, repr, value]; type is Python's type name.
"""
import json
import sys

import salt.utils.zfs

SIZES = [
    "9.50G", "100M", "1.23T", "10G", "464G", "1K", "1k", "1KB", "1Kb", "2.5E", "3P", "0", "0K", "512", "7.25G",
    "1.1M", "0.5K", "-", "none", "", "12.3", "1e3", "1_000", "+5", "abc", "1.5Q", "10GiB", "1.999999999T",
    "99.9M", "3.", ".5G", "0001M", "1.0G",
]


def main():
    rows = []
    for s in SIZES:
        v = salt.utils.zfs.to_size(s, False)
        rows.append([s, type(v).__name__, repr(v), v])
    json.dump({"salt": "3006.19 (c9c5ab41)", "rows": rows}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
