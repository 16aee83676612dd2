"""Record what Salt 3006 answers for malformed compound targets.

Unlike gen.py this runs Salt itself, imported from a checkout of
v3006.19 (commit c9c5ab41): the minion side through the loader's match
module (salt/modules/match.py compound, which calls
salt/matchers/compound_match.py), the master side through
salt.utils.minions.CkMinions.check_minions(expr, "compound") over a
temporary pki_dir and a localfs minion data cache. Debian 12's python3
with python3-yaml, -jinja2, -msgpack, -zmq, -cryptography, -pycryptodome,
-distro, -psutil, -requests, -packaging, -markupsafe, -setproctitle (see
docs/INTEROP.md for the looseversion shim):

    PYTHONPATH=<salt checkout>:<shims> /usr/bin/python3 malformed.py

writes ../compound_malformed.json. The expressions are seeded.
"""

import json
import logging
import os
import random
import sys
import tempfile

import salt.cache
import salt.config
import salt.loader
import salt.utils.minions

logging.disable(logging.CRITICAL)
HERE = os.path.dirname(os.path.abspath(__file__))

MINIONS = {
    "web1": {"grains": {"os": "Debian", "ipv4": ["10.0.0.5", "127.0.0.1"], "ipv6": ["::1"]},
             "pillar": {"role": "web"}, "cached": True},
    "db1": {"grains": {"os": "Ubuntu", "ipv4": ["10.0.1.7", "127.0.0.1"], "ipv6": ["::1"]},
            "pillar": {"role": "db"}, "cached": True},
    "new1": {"grains": {"os": "Debian", "ipv4": ["10.0.2.9"]}, "pillar": {}, "cached": False},
}
NODEGROUPS = {
    "webs": "web*", "ids": ["db1", "web1"], "gone": "N@nope or db1", "loop": "N@loop2", "loop2": "N@loop",
    "empty": "", "open": "( web*", "notweb": "not web*",
}
CASES = [
    # empty groups, stray and unbalanced parentheses
    "( )", "( ( ) )", "not ( )", "web* and ( )", "db* and ( )", "( ) or web*", "web* or ( )", "db* or ( )",
    "( web*", "( ( web*", "not ( web*", "web* )", ")", ") web*", "( web* ) )", "( web* ) ( db* )",
    "web* ( db* )", "db* ( web* )", "web* or db* ( web* )", "db* and web* ( db* )", "web* ( )", "( ) ( )",
    # operators in the wrong place
    "and web*", "or web*", "not", "web* and", "web* or", "web* not", "( and web* )", "( or web* )",
    "not not web*", "web* and not not db*", "web* db*", "web* and or db*", "web* not db*", "( not web* )",
    # bad subnets
    "S@bad", "not S@bad", "S@bad or web*", "web* and S@bad", "db* and S@bad", "S@bad and web*", "( S@bad )",
    "S@999.0.0.0/8", "S@10.0.0.0/33", "not S@10.0.0.0/33 and web*", "S@10.0.0.0/8", "S@::1", "web* S@bad",
    "S@bad ( web* )", "S@10.0.0.5",
    # bad regular expressions
    "E@(", "not E@(", "web* or E@(", "and E@(", "E@web[", "P@os:(", "not P@os:(", "J@role:(", "P@os:deb.*",
    "E@web\\d", "web* or E@) not db*",
    # bad globs and unknown engines
    "web[", "web[z-a]", "not web[z-a]", "X@foo", "x@web1", "R@%cluster", "web* or R@%cluster", "G@os",
    "not G@os", "I@role", "G@", "L@", "L@web1,,db1", "G;@os;Debian", "G@os:Debian",
    # nodegroups
    "N@nope", "N@nope web*", "web* N@nope", "N@nope or web*", "web* or N@nope", "not N@nope", "N@gone",
    "N@loop", "N@empty", "N@empty or web*", "N@open", "N@open or db*", "N@notweb", "not N@notweb", "N@ids",
    "N@webs and not N@ids",
]
ATOMS = ["web*", "db*", "S@bad", "E@(", "P@os:(", "G@os", "R@x", "X@y", "N@nope", "N@open", "( )", "web[z-a]",
         "G@os:Debian", "S@10.0.0.0/8"]
OPERS = ["and", "or", "not", "(", ")"]


def cases():
    rnd = random.Random(15)
    out = list(CASES)
    seen = set(out)
    while len(out) < len(CASES) + 600:
        words = []
        for _ in range(rnd.randint(1, 6)):
            words.extend(rnd.choice(ATOMS + OPERS).split())
        e = " ".join(words)
        if e not in seen:
            seen.add(e)
            out.append(e)
    return out


def master_side(tmp, exprs):
    opts = salt.config.master_config(None)
    opts.update(pki_dir=tmp + "/pki", cachedir=tmp + "/cache", sock_dir=tmp + "/sock",
                minion_data_cache=True, key_cache="", nodegroups=NODEGROUPS)
    os.makedirs(tmp + "/pki/minions")
    cache = salt.cache.factory(opts)
    for mid, m in MINIONS.items():
        with open(tmp + "/pki/minions/" + mid, "w") as f:
            f.write("key")
        if m["cached"]:
            cache.store("minions/" + mid, "data", {"grains": m["grains"], "pillar": m["pillar"]})
    ck = salt.utils.minions.CkMinions(opts)
    return {e: sorted(ck.check_minions(e, "compound")["minions"]) for e in exprs}


def minion_side(tmp, exprs):
    out = {e: {} for e in exprs}
    for mid, m in MINIONS.items():
        opts = salt.config.minion_config(None)
        opts.update(id=mid, grains=dict(m["grains"], id=mid), pillar=m["pillar"], nodegroups=NODEGROUPS,
                    cachedir=tmp + "/mc-" + mid, pki_dir=tmp + "/mpki-" + mid, sock_dir=tmp + "/ms-" + mid)
        compound = salt.loader.minion_mods(opts, whitelist=["match"])["match.compound"]
        for e in exprs:
            v = compound(e)
            out[e][mid] = {"value": list(v) if isinstance(v, (list, tuple)) else v, "repr": repr(v)}
    return out


def main():
    exprs = cases()
    with tempfile.TemporaryDirectory() as tmp:
        master = master_side(tmp, exprs)
        minion = minion_side(tmp, exprs)
    rows = [{"expr": e, "match_compound": minion[e], "check_minions": master[e]} for e in exprs]
    doc = {"salt": "3006.19 (c9c5ab41)", "python": sys.version.split()[0], "minions": MINIONS,
           "nodegroups": NODEGROUPS, "rows": rows}
    with open(os.path.join(HERE, "..", "compound_malformed.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
