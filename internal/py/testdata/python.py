#!/usr/bin/env python3
"""Writes python.json: what Python 3 answers for the values and strings the
tests of internal/py feed to their Go counterparts. Run it from this
folder with python3 and check the table in:

    python3 python.py > python.json

Values are written tagged ({"int": "1"}, {"float": "1.0"}, {"dict": [[k,
v], ...]}) so that a Go reader keeps int/float, key order and key types.
"""
import json
import math
import shlex
import sys


def tag(v):
    if v is None:
        return {"none": None}
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, str):
        return {"str": v}
    if isinstance(v, list):
        return {"list": [tag(e) for e in v]}
    if isinstance(v, dict):
        return {"dict": [[tag(k), tag(x)] for k, x in v.items()]}
    raise TypeError(type(v))


def attempt(f):
    try:
        return {"ok": f()}
    except (TypeError, ValueError) as e:
        return {"error": str(e)}


VALUES = [
    None, True, False, 0, -7, 2**40, 1.0, -0.5, 0.1, 1e16, 1e15, 123456789.125,
    1e-4, 1e-5, 2.5e-300, 1.7976931348623157e308, math.inf, -math.inf,
    "", "plain", "it's", 'say "hi"', "both ' and \"", "back\\slash",
    "tab\tnl\ncr\r", "\x00\x01\x1f\x7f", "caf\u00e9", "\u00a0nbsp", "\u00ad soft",
    "\u2028 line sep", "\u200b zw", "\U0001F600 emoji", "\ud7ff", "\U000e0001 tag",
    "\u0378 unassigned", "日本語",
    [], [1, "a", None, [True, 2.0]],
    {}, {"b": 1, "a": [1, 2], "c": {"x": None}},
    {2: "two", 1: "one", 1.5: "x"}, {True: "t", 0: "zero"},
    {"s": 1, 2: "mixed"}, {None: 1}, {None: 1, "a": 2},
]


def values():
    out = []
    for v in VALUES:
        row = {
            "value": tag(v),
            "repr": repr(v),
            "str": str(v),
            "type": type(v).__name__,
            "json": attempt(lambda: json.dumps(v, ensure_ascii=False)),
            "json_indent4": attempt(lambda: json.dumps(v, indent=4, ensure_ascii=False)),
            "json_sorted_indent2": attempt(lambda: json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False)),
            "json_ascii": attempt(lambda: json.dumps(v)),
        }
        out.append(row)
    return out


SHLEX = [
    "", "   ", "a b  c", "'single quoted' x", '"double quoted" y',
    "a'b c'd", 'a"b c"d', "''", 'x "" y', "back\\ slash", "tail\\",
    'in "dq \\" esc" out', 'dq "\\$HOME \\` \\\\ \\n"', "sq '\\n \\' ", "open 'quote",
    'open "quote', "esc\\\nnewline", "#comment a", "a #comment\nb", "a#b",
    "k=v, 'x y'", "fn(a, 'b c', k=v)", "f(x='a\\'b', y=\"c\\\"d\")",
    "caf\u00e9 \u00e9t\u00e9", "tabs\tand\nnewlines\r\n", "a;b|c&&d", "unicode \u2603 word",
]


def tokens(lex):
    return attempt(lambda: list(lex))


def shlex_rows():
    out = []
    for s in SHLEX:
        default_posix = shlex.shlex(s, posix=True)
        default_plain = shlex.shlex(s, posix=False)
        parse_fn = shlex.shlex(s, posix=True)
        parse_fn.escapedquotes = "\"'"
        out.append({
            "input": s,
            "split": attempt(lambda: shlex.split(s)),
            "split_nonposix": attempt(lambda: shlex.split(s, posix=False)),
            "split_comments": attempt(lambda: shlex.split(s, comments=True)),
            "shlex_posix": tokens(default_posix),
            "shlex_nonposix": tokens(default_plain),
            "shlex_escapedquotes": tokens(parse_fn),
            "quote": shlex.quote(s),
        })
    return out


json.dump({"python": sys.version.split()[0], "values": values(), "shlex": shlex_rows()},
          sys.stdout, indent=1, ensure_ascii=True)
sys.stdout.write("\n")
