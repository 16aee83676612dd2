"""Regenerate the reference results in state/target/testdata and
state/modules/match/testdata from CPython and from Salt's own code.

    python3 state/target/testdata/gen/gen.py

See saltref.py for how Salt's functions are loaded. Every table is
seeded, so a rerun reproduces the files. compound_malformed.json comes
from malformed.py, which imports Salt itself instead.
"""

import copy
import fnmatch
import json
import os
import random
import re
import sys
import warnings

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import saltref  # noqa: E402

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.dirname(HERE)
MATCH = os.path.join(TARGET, "..", "..", "modules", "match", "testdata")


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def gen_fnmatch():
    rnd = random.Random(7)
    pats = ["web*", "web?", "*", "", "web[12]", "web[!12]", "web[1-3]", "web[3-1]", "[!]]x", "[]]x", "[]-a]", "[!-a]",
            "[a-]", "[-a]", "[z-a-c]", "[a-c-e]", "[bz-ab-cd]", "web[", "web[!", "[!]", "[]", "*.example.com",
            "db-*-prod", "W*", "w*", "[^a]*", "[[]*", "[\\]x", "[a\\-z]", "[!z-a]", "a*b*c", "*a*a*", "?*?", "[&~|]",
            "[a-c-b-a]", "[b-a-c-a]", "[a-z-0]", "x[--/]", "[!a-c-e]", "é*", "[à-ÿ]*", "*\n*", "a**b", "[a-b-]",
            "[--]", "[---]", "[!--]", "[a-z0-9]*-[0-9]"]
    names = ["web1", "web2", "web3", "web4", "webx", "web", "Web1", "x", "]x", "-", "a", "b", "c", "d", "e", "z", "^",
             "[", "\\x", "\\", "host.example.com", "db-eu-prod", "db--prod", "aXbYc", "abc", "aa", "a", "", "&", "|",
             "~", "é1", "à", "a\nb", "web[", "web[!", "!", ".", "/", "0", "host-7", "aab", "ab-0"]
    rows = []

    def add(p, n):
        try:
            rows.append([p, n, fnmatch.fnmatch(n, p)])
        except Exception:
            rows.append([p, n, "error"])
    for p in pats:
        for n in names:
            add(p, n)
    for _ in range(3000):
        p = "".join(rnd.choice("ab-!]^[*?\\z") for _ in range(rnd.randint(1, 7)))
        n = "".join(rnd.choice("ab-!]^[z\\") for _ in range(rnd.randint(0, 4)))
        add(p, n)
    write_jsonl(os.path.join(TARGET, "fnmatch.jsonl"), rows)


def gen_pyre():
    groups = [
        ([r"web", r"web\d+$", r"^web", r"eb", r".*eb", r"web(1|2)", r"web[0-9]{2}", r"web.{,2}$", r"web\Z", r"(?i)WEB",
          r"(?i:WEB)1", r"w(?#comment)eb", r"(?P<n>web)\d", r"(?=web)w", r"(?!db)\w+", r"(?<=w)eb", r"(web)\1",
          r"(?P<x>a)(?P=x)", r"a++", r"(?>a)", r"\x77eb", r"\u0077eb", r"\167eb", r"\0", r"[\d]+", r"[^\W]+", r"web\b",
          r"[[:alpha:]]", r"[]a]", r"[^]a]", r"\pL", r"\Qa", r"(?x) w e b", r"(?u)web", r"(?a)web", r"(?U)web", r"a{2,}",
          r"{", r"a{", r"x{1,2", r"web$", r"db|web", r"(", r")", r"[a", r"*", r"\z", r"\Z", r"(?s).*", r"(?m)^web",
          r"\w+\.example\.com", r"[\b]", r"\N{LATIN SMALL LETTER W}eb", r"web\s*", r"we\B", r"a?+", r"(?i)ÉCOLE", r"é",
          r"\d", r"\w", r"(?<n>a)", r"\777", r"[\777]", r"[\1]", r"\08"],
         ["web1", "web12", "db1", "WEB1", "web", "eb", "www", "aa", "é", "école1", "a.example.com", "", "web\n", "\x08",
          "\x00", "{", "a{", "x{1,2", "[:]a", "]"]),
        (["(?)", "(?-i:a)", "(?i-i:a)", "(?-:a)", "(?i)(?m)a", "a(?i)b", "(?s-i:a)", "(?i-m)a", "(?im:A)", "\\xé",
          "\\x4", "\\x{41}", "[\\8]", "\\é", "a$", "(?m)a$", "a$\\n", "s(?i)x", "\\x61", "(?i)(?s)A.", "(?#c)a"],
         ["a", "a\n", "A", "é", "ab", "x", "\x61"]),
        ([r"\w+", r"\d", r"\s", r"\S+x", r"\W", r"[\w.]+", r"[\s]", r"(?a)\w+", r"\D+"],
         ["é1", "٣", "\xa0", "a b", "x", "_", "\x1c", ".é", "ab"]),
    ]
    rows = []
    for pats, subjects in groups:
        for p in pats:
            try:
                r = re.compile(p)
            except Exception:
                rows.append([p, None, "error"])
                continue
            for s in subjects:
                rows.append([p, s, bool(r.match(s))])
    write_jsonl(os.path.join(TARGET, "pyre.jsonl"), rows)


def compound_string_eval(words, atoms):
    """eval() of the string compound_match.py builds, with Brine's two
    deliberate rejections ("( )", a value followed by "(") marked error."""
    opers = ["and", "or", "not", "(", ")"]
    for a, b in zip(words, words[1:]):
        if (a == "(" and b == ")") or ((a in atoms or a == ")") and b == "("):
            return "error"
    results = []
    for w in words:
        if w in opers:
            if results:
                if results[-1] == "(" and w in ("and", "or"):
                    return "error"
                if w == "not" and results[-1] not in ("and", "or", "("):
                    results.append("and")
            elif w not in ("(", "not"):
                return "error"
            results.append(w)
        else:
            results.append(atoms[w])
    try:
        v = eval(" ".join(results))  # noqa: S307 - the point of the exercise
    except Exception:
        return "error"
    return v if isinstance(v, bool) else "error"


def gen_expr(rnd, atoms, depth):
    r = rnd.random()
    if depth <= 0 or r < 0.3:
        return [rnd.choice(atoms)]
    if r < 0.45:
        return ["not"] + gen_expr(rnd, atoms, depth - 1)
    if r < 0.6:
        return ["("] + gen_expr(rnd, atoms, depth - 1) + [")"]
    if r < 0.7:
        return gen_expr(rnd, atoms, depth - 1) + ["not"] + gen_expr(rnd, atoms, depth - 1)
    return gen_expr(rnd, atoms, depth - 1) + [rnd.choice(["and", "or"])] + gen_expr(rnd, atoms, depth - 1)


def gen_compound_eval():
    rnd = random.Random(11)
    atoms = {"web*": "True", "db*": "False", "G@os:Debian": "True", "G@os:Ubuntu": "False"}
    toks = list(atoms) + ["and", "or", "not", "(", ")"]
    seen, rows = set(), []
    while len(rows) < 8000:
        if len(rows) < 4000:
            words = [rnd.choice(toks) for _ in range(rnd.randint(1, 9))]
        else:
            words = gen_expr(rnd, list(atoms), 4)
        e = " ".join(words)
        if e not in seen:
            seen.add(e)
            rows.append([e, compound_string_eval(words, atoms)])
    write_jsonl(os.path.join(TARGET, "compound_eval.jsonl"), rows)


GRAINS = {
    "id": "web1", "os": "Debian", "osmajorrelease": 12, "is_vm": False, "roles": ["web", "Cache"],
    "ipv4": ["10.0.0.5", "127.0.0.1"], "ipv6": ["::1", "fe80::1", "2001:db8::5"],
    "ip_interfaces": {"eth0": ["10.0.0.5", "fe80::1"]},
    "env": {"name": "prod", "tier": 1, "tags": ["a", "b"]},
    "mixed": ["plain", {"k": "v"}, 3], "ints": {1: "one", "2": "two"}, "path": "a:b",
    "empty": {}, "nothing": None, "float": 1.5,
}  # testGrains in fixture_test.go


def gen_subdict():
    rnd = random.Random(5)
    keys = ["os", "env", "name", "tier", "tags", "mixed", "k", "0", "-1", "1", "2", "ints", "roles", "ipv6", "fe80", "",
            "*", "ip_interfaces", "eth0", "path", "a", "b", "empty", "nothing", "float", "is_vm", "osmajorrelease", "id",
            "true", "01", " 1", "+1"]
    vals = ["Debian", "deb*", "*", "prod", "1", "b", "v", "plain", "3", "one", "two", "none", "false", "1.5", "12",
            "cache", "web", "fe80::1", "10.0.0.*", "a:b", "{'k': 'v'}", "*k*", "[ab]", "d.*", "\\d+", "(", "pr(od|e)",
            "true", "DEB*", "", "*:*", "name", "tags", "k", "web1", "[!a]*", ".*e.*", "^d", "c.*"]
    seen, rows = set(), []
    for _ in range(20000):
        parts = [rnd.choice(keys) for _ in range(rnd.randint(1, 3))] + [rnd.choice(vals)]
        delim = rnd.choice([":", ":", ":", "|"])
        expr = delim.join(parts)
        if rnd.random() < 0.1:
            expr = "*" + delim + expr
        mode = rnd.choice(["glob", "regex", "exact"])
        if (mode, delim, expr) in seen:
            continue
        seen.add((mode, delim, expr))
        try:
            r = bool(saltref.subdict_match(GRAINS, expr, delimiter=delim,
                                           regex_match=mode == "regex", exact_match=mode == "exact"))
        except Exception:
            r = "error"
        rows.append([mode, delim, expr, r])
    write_jsonl(os.path.join(TARGET, "subdict_ref.jsonl"), rows)


def gen_compound_ref():
    rnd = random.Random(3)
    nodegroups = {"webs": "web*", "both": "web1 or db1", "nested": "N@webs and G@os:Debian", "ids": ["db1", "web12"],
                  "ids_re": ["web[12]", "db1"], "deep": ["N@nested", "or", "N@ids"]}
    minions = {  # as in compound_ref_test.go
        "web1": ({"os": "Debian", "ipv4": ["10.0.0.5"], "ipv6": ["::1"], "roles": ["web", "Cache"],
                  "env": {"name": "prod"}}, {"role": "web", "app": {"ports": [80, 443]}}),
        "db1": ({"os": "Ubuntu", "ipv4": ["10.0.1.7"], "ipv6": ["2001:db8::7"], "roles": ["db"],
                 "env": {"name": "stage"}}, {"role": "db"}),
        "web12": ({"os": "Debian", "ipv4": ["10.0.0.12"], "roles": [], "env": {}}, {}),
    }
    atoms = ["web*", "db?", "web[0-9]", "E@web\\d+", "E@db", "L@web1,db1", "L@web12", "G@os:Debian", "G@os:ubuntu",
             "P@os:deb.*", "I@role:web", "J@role:d.", "S@10.0.0.0/24", "S@10.0.1.7", "S@2001:db8::/32",
             "G;@env;name;prod", "I@app:ports:443", "N@webs", "N@both", "N@nested", "N@ids", "N@ids_re", "N@deep",
             "G@roles:c*", "*", "G@env:*"]
    seen, rows = set(), []
    while len(rows) < 3000:
        e = " ".join(gen_expr(rnd, atoms, 3))
        if e in seen:
            continue
        seen.add(e)
        for mid, (grains, pillar) in minions.items():
            opts = {"id": mid, "grains": grains, "pillar": pillar, "nodegroups": nodegroups}
            try:
                r = saltref.MATCHERS["compound_match.match"](e, opts=opts, minion_id=mid)
                r = r if isinstance(r, bool) else "error"
            except Exception:
                r = "error"
            rows.append([e, mid, r])
    write_jsonl(os.path.join(TARGET, "compound_ref.jsonl"), rows)


def gen_ipcidr():
    grainsets = [
        {"ipv4": ["10.0.0.5", "127.0.0.1"], "ipv6": ["::1", "fe80::1", "2001:db8::5"]},
        {"ipv4": ["192.168.1.20"], "ipv6": []},
        {"ipv4": "10.0.0.15"},
        {"ipv6": ["fe80::1%eth0", "::ffff:1.2.3.4"]},
        {},
    ]
    targets = ["10.0.0.0/8", "10.0.0.5", "10.0.0.5/32", "10.0.0.1/8", "10.0.0.1", "192.168.1.0/24",
               "192.168.1.0/255.255.255.0", "192.168.1.0/0.0.0.255", "0.0.0.0/0", "::/0", "::1", "2001:db8::/32",
               "2001:DB8::5", "2001:db8:0:0:0:0:0:5", "fe80::/10", "fe80::1%eth0", "fe80::1", "::ffff:1.2.3.4",
               "::ffff:102:304", "::ffff:0:0/96", "garbage", "", "10.0.0.0/33", "010.0.0.1", "10.0.0.0/08", "1.2.3.4/ 8",
               "10.0.0.0/255.0.255.0", "::/129", "2001:db8::/32/1", "10.0.0.15", "10.0.0.1/32"]
    rows = []
    for i, g in enumerate(grainsets):
        for t in targets:
            r = saltref.MATCHERS["ipcidr_match.match"](t, opts={"grains": g})
            rows.append([i, t, "invalid" if r == [] else r])
    with open(os.path.join(TARGET, "ipcidr_ref.json"), "w") as f:
        json.dump({"grains": grainsets, "rows": rows}, f, indent=0)


def gen_nodegroups():
    rnd = random.Random(9)
    words = ["web*", "db1", "web1", "G@os:Debian", "L@a,b", "web[12]", "x?", "and", "or", "not", "(", ")", "E@x",
             "{a}", "a\\b"]
    cases = []
    for _ in range(400):
        names = ["g%d" % i for i in range(rnd.randint(2, 5))]
        groups = {}
        for i, name in enumerate(names):
            ws = [rnd.choice(words) for _ in range(rnd.randint(0, 4))]
            for _ in range(rnd.randint(0, 2)):
                if i + 1 < len(names):  # only forward references: no loops
                    ws.insert(rnd.randint(0, len(ws)), "N@" + rnd.choice(names[i + 1:]))
            groups[name] = " ".join(ws) if rnd.random() < 0.5 else ws
        cases.append([groups, list(saltref.nodegroup_comp("g0", groups))])
    with open(os.path.join(TARGET, "nodegroup_ref.json"), "w") as f:
        json.dump(cases, f)


def gen_match_module():
    opts = {"id": "web1", "grains": {"id": "web1", "os": "Debian", "roles": ["web", "Cache"],
                                     "ipv4": ["10.0.0.5", "127.0.0.1"], "ipv6": ["::1"]},
            "pillar": {"role": "web"}, "nodegroups": {"webs": "web*", "ids": ["db1", "db2"]}}
    webdb = {"web*": "W", "db*": "D"}
    calls = [
        ("compound", ["G@os:Debian and web*"], {}), ("compound", ["web*", "db1"], {}),
        ("compound", ["N@webs and not N@ids"], {}), ("compound", ["N@ids"], {"minion_id": "db2"}),
        ("compound", [["G@os:Debian", "and", "web1"]], {}), ("compound", ["and web*"], {}),
        ("compound", ["R@%cluster"], {}), ("compound", [5], {}), ("compound", ["G@os"], {}),
        ("compound", ["web* db*"], {}),
        ("glob", ["web*"], {}), ("glob", ["web*", "db1"], {}), ("glob", ["1*", 12], {}), ("glob", [1], {}),
        ("glob", ["web*", ""], {}),
        ("pcre", ["w.b"], {}), ("pcre", ["eb"], {}), ("pcre", ["("], {}), ("pcre", ["w.b", "db1"], {}),
        ("list_", ["db1,web1"], {}), ("list_", [["web1"]], {}), ("list_", [{"web1": 1}], {}), ("list_", [1], {}),
        ("list_", ["web1 ,db1"], {}),
        ("grain", ["os:Debian"], {}), ("grain", ["os|debian"], {"delimiter": "|"}), ("grain", ["os"], {}),
        ("grain", ["os:Debian", ""], {}), ("grain", ["roles:cache"], {}), ("grain", [5], {}),
        ("grain_pcre", ["os:deb"], {}), ("grain_pcre", ["os:("], {}),
        ("pillar", ["role:w*"], {}), ("pillar", ["os:Debian"], {}), ("pillar_pcre", ["role:w.b"], {}),
        ("ipcidr", ["10.0.0.0/8"], {}), ("ipcidr", ["10.0.0.5"], {}), ("ipcidr", ["192.168.0.0/16"], {}),
        ("ipcidr", [167772165], {}), ("ipcidr", ["bogus"], {}), ("ipcidr", ["::1"], {}),
        ("filter_by", [webdb], {}), ("filter_by", [webdb], {"minion_id": "db1"}),
        ("filter_by", [{"x*": 1, "default": 2}], {}), ("filter_by", [{"x*": 1, "other": 3}], {"default": "other"}),
        ("filter_by", [{"x*": 1}], {}), ("filter_by", [webdb, "glob"], {}),
        ("filter_by", [{"db1,web1": "L"}], {"tgt_type": "list_"}),
        ("filter_by", [{"db1,web1": "L"}], {"tgt_type": "list"}),
        ("filter_by", [{"os:Ubuntu": "U", "os:Debian": "Deb"}], {"tgt_type": "grain"}),
        ("filter_by", [{"os|Debian": "yes"}], {"tgt_type": "grain", "minion_id": "|"}),
        ("filter_by", [{"web*": {"a": {"b": 1}, "l": [1]}}],
         {"merge": {"a": {"c": 2}, "l": [1.0, 2]}, "merge_lists": True}),
        ("filter_by", [{"web*": {"l": [1]}}], {"merge": {"l": [2]}}),
        ("filter_by", [{"web*": None}], {"merge": {"m": 1}}),
        ("filter_by", [{"x*": 1, "default": {"d": 1}}], {"merge": {"m": 1}}),
        ("filter_by", [webdb], {"merge": [1]}), ("filter_by", [{"web*": "str"}], {"merge": {"m": 1}}),
        ("filter_by", [webdb], {"tgt_type": "ipcidr", "minion_id": "x"}),
        ("filter_by", [{"10.0.0.0/8": "net"}], {"tgt_type": "ipcidr"}), ("filter_by", [webdb], {"tgt_type": "nope"}),
        ("filter_by", [{"1": "one", "web*": "W"}], {"tgt_type": "compound"}),
        ("search_by", [{"web": ["web*"], "db": ["db*"], "all": ["*", "G@os:Debian"]}], {}),
        ("search_by", [{"db": ["db*"]}], {}), ("search_by", [{"db": ["db*"]}], {"minion_id": "db3"}),
        ("search_by", [{"x": "q*"}], {}), ("search_by", [{"x": ["web*"]}], {"tgt_type": "pcre"}),
        ("search_by", [{"x": {"web*": 1}}], {}),
        ("ifelse", ["web*", "W", "D"], {}), ("ifelse", ["db*", "x", "dflt"], {}), ("ifelse", [True, "T", "F"], {}),
        ("ifelse", [False, "T", "F"], {}), ("ifelse", ["only"], {}), ("ifelse", ["w.b", "P", "N"], {"tgt_type": "pcre"}),
        ("ifelse", ["db*", "D", "N"], {"minion_id": "db1"}), ("ifelse", ["a", "b"], {}),
        ("ifelse", ["web*", "a", "web*", "b", "c"], {}), ("ifelse", [1, "one", "web1", "w", "d"], {"tgt_type": "glob"}),
        ("ifelse", ["web*", {"a": 1}, {}], {"merge": {"b": 2}}),
    ]
    rows = []
    for fun, args, kw in calls:
        mod = saltref.match_module(copy.deepcopy(opts))
        try:
            r = getattr(mod, fun)(*copy.deepcopy(args), **copy.deepcopy(kw))
        except Exception as e:
            r = {"__error__": type(e).__name__}
        rows.append({"fun": "match." + ("list" if fun == "list_" else fun), "args": args, "kwargs": kw, "want": r})
    with open(os.path.join(MATCH, "salt_ref.json"), "w") as f:
        json.dump({"opts": opts, "calls": rows}, f, indent=1)


if __name__ == "__main__":
    gen_fnmatch()
    gen_pyre()
    gen_compound_eval()
    gen_subdict()
    gen_compound_ref()
    gen_ipcidr()
    gen_nodegroups()
    gen_match_module()
