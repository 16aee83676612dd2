#!/usr/bin/python3
"""Produce msgpack_vectors.json: the bytes Debian's msgpack-python packs
for values the Go tests mirror, with the settings Salt's wire uses
(use_bin_type=False) and its IPC uses (use_bin_type=True). Extension 78
(datetime) and 79 (constant) are built here from their documented layout.
Written for Brine; contains no Salt code."""
import datetime
import json
import sys

import msgpack


def ext_default(obj):
    if isinstance(obj, datetime.datetime):
        return msgpack.ExtType(78, obj.strftime("%Y%m%dT%H:%M:%S.%f").encode())
    if isinstance(obj, Const):
        return msgpack.ExtType(79, msgpack.packb((obj.name, obj.value), use_bin_type=True))
    raise TypeError(type(obj))


class Const:
    def __init__(self, name, value):
        self.name, self.value = name, value


def pack(v, bin_type=False):
    return msgpack.packb(v, default=ext_default, use_bin_type=bin_type).hex()


CASES = [
    ("nil", None), ("true", True), ("false", False),
    ("int_0", 0), ("int_127", 127), ("int_128", 128), ("int_255", 255), ("int_256", 256),
    ("int_65535", 65535), ("int_65536", 65536), ("int_u32max", 2**32 - 1), ("int_2p32", 2**32),
    ("int_i64max", 2**63 - 1), ("int_u64max", 2**64 - 1),
    ("int_m1", -1), ("int_m32", -32), ("int_m33", -33), ("int_m128", -128), ("int_m129", -129),
    ("int_m32768", -32768), ("int_m32769", -32769), ("int_m2p31", -2**31), ("int_m2p31m1", -2**31 - 1),
    ("int_i64min", -2**63),
    ("float_1_5", 1.5), ("float_m0", -0.0), ("float_1e300", 1e300),
    ("str_empty", ""), ("str_a", "a"), ("str_31", "x" * 31), ("str_32", "y" * 32),
    ("str_255", "z" * 255), ("str_256", "w" * 256), ("str_65536", "v" * 65536),
    ("str_unicode", "h\u00e9llo \u2603"),
    ("bytes_ff", b"\xff\xfe\x00"),
    ("list_mixed", [1, "two", None, True, 2.5, [], {}]),
    ("map_ordered", {"b": 1, "a": [1, 2], "c": {"z": None, "y": "x"}}),
    ("map_intkey", {1: "one", "2": 2}),
    ("list_16", list(range(16))),
    ("map_16", {f"k{i:02d}": i for i in range(16)}),
    ("datetime", datetime.datetime(2026, 12, 1, 1, 2, 3, 456789)),
    ("constant", Const("SENTINEL", 3)),
    ("bigint_str", str(2**64)),
]
BIN_CASES = [
    ("bin_str_32", "y" * 32),
    ("bin_bytes", b"\xff\xfe\x00"),
    ("bin_map", {"tag": "salt/auth", "data": b"\x00\x01"}),
]


def main():
    out = {"wire": {n: pack(v) for n, v in CASES}, "bin": {n: pack(v, True) for n, v in BIN_CASES}}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
