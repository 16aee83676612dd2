#!/usr/bin/python3
"""Produce msgpack_random.json: random nested values packed by Debian's
msgpack-python as Salt packs them (wire: use_bin_type=False; IPC/events:
use_bin_type=True), for the Go test that re-encodes each decoded value
and expects the same bytes. Written for Brine; contains no Salt code."""
import datetime
import json
import random
import sys

import msgpack

rng = random.Random(3006)


def ext(obj):
    if isinstance(obj, datetime.datetime):
        return msgpack.ExtType(78, obj.strftime("%Y%m%dT%H:%M:%S.%f").encode())
    raise TypeError(type(obj))


def scalar():
    k = rng.randrange(10)
    if k == 0:
        return rng.choice([None, True, False])
    if k == 1:
        return rng.randrange(-2**63, 2**64)
    if k == 2:
        return rng.randrange(-300, 70000)
    if k == 3:
        return rng.uniform(-1e6, 1e6)
    if k == 4:
        return "".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(0, 40)))
    if k == 5:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
    if k == 6:
        return datetime.datetime(rng.randrange(1000, 9999), rng.randrange(1, 13), rng.randrange(1, 29),
                                 rng.randrange(24), rng.randrange(60), rng.randrange(60), rng.randrange(10**6))
    return "x" * rng.choice([0, 31, 32, 255, 256, 300])


def value(depth=0):
    if depth > 3 or rng.random() < 0.4:
        return scalar()
    if rng.random() < 0.5:
        return [value(depth + 1) for _ in range(rng.randrange(0, 6))]
    d = {}
    for _ in range(rng.randrange(0, 6)):
        key = rng.choice([scalar, lambda: rng.randrange(-5, 100000)])()
        if isinstance(key, (str, int)) and not isinstance(key, bool):
            d[key] = value(depth + 1)
    return d


def main():
    wire = [msgpack.packb(value(), default=ext, use_bin_type=False).hex() for _ in range(100)]
    binv = []
    for _ in range(100):
        v = value()
        binv.append(msgpack.packb(v, default=ext, use_bin_type=True).hex())
    json.dump({"wire": wire, "bin": binv}, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
