#!/usr/bin/env python3
"""Generate pycompat.json: random values with the text Python prints for them.

The expectations come from Python itself: repr/str, json.dumps (as Salt's
json outputter calls it), pprint.pformat, yaml.safe_dump (PyYAML, as Salt's
yaml outputter calls it), and a small re-statement of the nested and txt
outputters' rules written for this test. Run: python3 gen_pycompat.py > pycompat.json
"""
import json
import pprint
import random
import sys

import yaml

rnd = random.Random(20261201)
WORDS = ["web1", "db", "a", "ok", "True", "null", "x y", "it's", 'say "hi"', "tab\there",
         "line1\nline2", "trail\n", "ünï", "日本", "\x1b[31mred", "a: b", "- item", "#c",
         "", " lead", "trail ", "1.5", "0077", "yes", "~", "back\\slash", "€uro", "\x7f",
         "long " * 20, "x" * 90, "€" * 3, "{a}", "[1]", "@at", "%p", "\r\nx", "k\u2028v"]


def rand_scalar():
    c = rnd.random()
    if c < 0.35:
        return rnd.choice(WORDS)
    if c < 0.5:
        return rnd.choice([0, 1, -5, 42, 123456789012, 10**20 // 10**5])
    if c < 0.6:
        return rnd.choice([0.5, -1.25, 1e16, 1e-05, 3.0, 2.5e-310, 0.1 + 0.2])
    if c < 0.75:
        return rnd.choice([True, False])
    return None


def rand_key():
    c = rnd.random()
    if c < 0.85:
        return rnd.choice(["web1", "db", "a", "b", "ret", "Z", "z", "_x", "ünï", "10", "2", "key with space", "changes", "comment"])
    return rnd.choice([1, 2, 10, -1])


def rand_value(depth):
    c = rnd.random()
    if depth > 3 or c < 0.45:
        return rand_scalar()
    if c < 0.75:
        d = {}
        for _ in range(rnd.randint(0, 5)):
            d[rand_key()] = rand_value(depth + 1)
        return d
    return [rand_value(depth + 1) for _ in range(rnd.randint(0, 4))]


def tag(v):
    """Encode v so that Go can rebuild it with types and key order."""
    if isinstance(v, dict):
        return {"map": [[tag(k), tag(x)] for k, x in v.items()]}
    if isinstance(v, list):
        return {"list": [tag(x) for x in v]}
    if isinstance(v, bool) or v is None:
        return {"lit": v}
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    return {"str": v}


def nested(ret, indent=0, prefix="", out=None):
    """The nested outputter's layout without colours (salt/output/nested.py rules)."""
    if out is None:
        out = []
    sp = " " * indent
    if ret is None or ret is True or ret is False:
        out.append(f"{sp}{prefix}{ret}")
    elif isinstance(ret, (int, float)):
        out.append(f"{sp}{prefix}{ret!r}")
    elif isinstance(ret, str):
        for i, line in enumerate(ret.splitlines()):
            p = prefix if i == 0 else " " * len(prefix)
            out.append(f"{sp}{p}{line.replace(chr(27), '?')}")
    elif isinstance(ret, list):
        for item in ret:
            if isinstance(item, (list, dict)):
                out.append(f"{sp}|_")
                nested(item, indent + 2, "" if isinstance(item, dict) else "- ", out)
            else:
                nested(item, indent, "- ", out)
    elif isinstance(ret, dict):
        if indent:
            out.append(f"{sp}----------")
        try:
            keys = sorted(ret)
        except TypeError:
            ret = {str(k): v for k, v in ret.items()}
            keys = sorted(ret)
        for k in keys:
            out.append(f"{sp}{prefix}{k}:")
            nested(ret[k], indent + 4, "", out)
    return out


def txt(data):
    """The txt outputter's rules (salt/output/txt.py)."""
    ret = ""
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str):
                for line in value.splitlines():
                    ret += f"{key}: {line}\n"
            else:
                ret += f"{key}: {value}\n"
    elif isinstance(data, str):
        ret += data + "\n"
    else:
        ret += pprint.pformat(data) + "\n"
    return ret


def jsonout(data, indent=4, sort_keys=False):
    try:
        return json.dumps(data, ensure_ascii=False, indent=indent, sort_keys=sort_keys)
    except TypeError:
        return json.dumps({})


def yamlout(data, **params):
    try:
        return yaml.safe_dump(data, allow_unicode=True, **params)
    except TypeError:
        return None


cases = []
for i in range(250):
    v = rand_value(0)
    if i % 3 == 0:
        v = {rand_key(): v}
    case = {
        "data": tag(v),
        "repr": repr(v),
        "str": str(v),
        "nested": "\n".join(nested(v)),
        "nested_indent2": "\n".join(nested(v, 2)),
        "txt": txt(v),
        "json": jsonout(v),
        "json_pretty": jsonout(v, 4, True),
        "json_line": jsonout(v, None),
        "json_0": jsonout(v, 0),
        "pprint": pprint.pformat(v),
        "pprint_4": pprint.pformat(v, indent=4),
        "pprint_w30": pprint.pformat(v, width=30),
        "yaml": yamlout(v, default_flow_style=False),
        "yaml_indent4": yamlout(v, default_flow_style=False, indent=4),
        "yaml_flow": yamlout(v, default_flow_style=True, indent=0),
    }
    cases.append(case)
json.dump(cases, sys.stdout, ensure_ascii=False, indent=0)
