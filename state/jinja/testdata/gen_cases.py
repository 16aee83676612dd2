#!/usr/bin/env python3
"""Regenerate cases.json: each template rendered by real Jinja2 in an
environment configured the way Salt configures it (StrictUndefined,
do/loopcontrols, dict finalizer, Salt's json/yaml/unique/... filters as
Salt defines them). Written for Brine; not Salt code.

    python3 gen_cases.py > cases.json
"""
import copy
import hashlib
import json
import re
import shlex
import sys
import traceback
from collections import OrderedDict

import jinja2
import jinja2.ext
import jinja2.sandbox
import yaml
from jinja2 import nodes


class PrintableDict(OrderedDict):
    def __str__(self):
        out = []
        for k, v in self.items():
            if isinstance(v, str):
                out.append(f"{k!r}: {v!r}")
            else:
                out.append(f"{k!r}: {v!s}")
        return "{" + ", ".join(out) + "}"

    def __repr__(self):
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self.items()) + "}"


def finalize(data):
    def explore(d):
        if isinstance(d, dict):
            return PrintableDict([(k, explore(v)) for k, v in d.items()])
        if isinstance(d, (list, tuple, set)):
            return d.__class__([explore(v) for v in d])
        return d
    return explore(data)


def f_json(v, sort_keys=True, indent=None):
    return json.dumps(v, sort_keys=sort_keys, indent=indent, ensure_ascii=False).strip()


def f_yaml(v, flow_style=True):
    t = yaml.safe_dump(v, default_flow_style=flow_style, allow_unicode=True).strip()
    if t.endswith("\n..."):
        t = t[:-4]
    return t


def f_tojson(v, indent=None, **opts):
    opts.setdefault("ensure_ascii", True)
    if indent is not None:
        opts["indent"] = indent
    return (json.dumps(v, **opts).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026").replace("'", "\\u0027"))


def f_unique(values):
    ret = []
    for v in values:
        if v not in ret:
            ret.append(v)
    return ret


def f_sequence(d):
    return d if isinstance(d, (list, tuple, set, dict)) else [d]


def f_to_bool(val):
    if val is None:
        return False
    if isinstance(val, bool):
        return val
    if isinstance(val, str):
        return val.lower() in ("yes", "1", "true")
    if isinstance(val, int):
        return val > 0
    if isinstance(val, (list, dict)):
        return len(val) > 0
    return False


def _re_flags(ignorecase, multiline):
    return (re.I if ignorecase else 0) | (re.M if multiline else 0)


def f_regex_search(txt, rgx, ignorecase=False, multiline=False):
    m = re.search(rgx, txt, _re_flags(ignorecase, multiline))
    if not m:
        return None
    return m.groups() or (m.group(),)


def f_regex_match(txt, rgx, ignorecase=False, multiline=False):
    m = re.match(rgx, txt, _re_flags(ignorecase, multiline))
    if not m:
        return None
    return m.groups() or (m.group(),)


def f_regex_replace(txt, rgx, val, ignorecase=False, multiline=False):
    return re.compile(rgx, _re_flags(ignorecase, multiline)).sub(val, txt)


def f_yaml_dquote(text):
    import io
    with io.StringIO() as s:
        e = yaml.emitter.Emitter(s, width=sys.maxsize)
        e.write_double_quoted(str(text))
        return s.getvalue()


def f_yaml_encode(data):
    node = yaml.representer.SafeRepresenter().represent_data(data)
    tag = node.tag.rsplit(":", 1)[-1]
    return f_yaml_dquote(node.value) if tag == "str" else node.value


def f_load_yaml(v):
    return yaml.safe_load(str(v))


def f_load_json(v):
    try:
        return json.loads(str(v))
    except (ValueError, TypeError, AttributeError):
        raise jinja2.exceptions.TemplateRuntimeError(f"Unable to load json from {v}")


def t_match(txt, rgx, ignorecase=False, multiline=False):
    return bool(re.compile(rgx, _re_flags(ignorecase, multiline)).match(txt))


class Serializer(jinja2.ext.Extension):
    tags = {"load_yaml", "load_json", "load_text", "import_yaml", "import_json", "import_text"}

    def parse(self, parser):
        name = parser.stream.current.value
        if name.startswith("load_"):
            lineno = next(parser.stream).lineno
            parser.stream.expect("name:as")
            target = parser.parse_assign_target()
            macro = "_" + parser.free_identifier().name
            body = parser.parse_statements(("name:endload",), drop_needle=True)
            return [
                nodes.Macro(macro, [], [], body).set_lineno(lineno),
                nodes.Assign(target, nodes.Filter(
                    nodes.Call(nodes.Name(macro, "load").set_lineno(lineno), [], [], None, None).set_lineno(lineno),
                    name, [], [], None, None).set_lineno(lineno)).set_lineno(lineno),
            ]
        conv = name.split("_", 1)[1]
        imp = parser.parse_import()
        return [imp, nodes.Assign(nodes.Name(imp.target, "store").set_lineno(imp.lineno),
                                  nodes.Filter(nodes.Name(imp.target, "load").set_lineno(imp.lineno),
                                               "load_" + conv, [], [], None, None).set_lineno(imp.lineno)).set_lineno(imp.lineno)]


def traverse(data, key, default=None, delimiter=":"):
    for part in key.split(delimiter):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list):
            try:
                data = data[int(part)]
            except (ValueError, IndexError):
                return default
        else:
            return default
    return data


def fake_salt(ctx):
    """The few execution modules the Go test's fake caller also has."""
    pillar, grains = ctx.get("pillar", {}), ctx.get("grains", {})

    def filter_by(lookup_dict, grain="os_family", merge=None, default="default", base=None):
        val = lookup_dict.get(traverse(grains, grain), lookup_dict.get(default))
        if base and base in lookup_dict:
            merged = dict(lookup_dict[base])
            merged.update(val or {})
            val = merged
        if merge:
            val = dict(val or {})
            val.update(merge)
        return val

    return {
        "pillar.get": lambda key, default="": traverse(pillar, key, default),
        "grains.get": lambda key, default="": traverse(grains, key, default),
        "grains.filter_by": filter_by,
        "test.echo": lambda text: text,
    }


def make_env(files, allow_undefined=False, trim=False, lstrip=False):
    kw = dict(extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols", Serializer],
              loader=jinja2.DictLoader(files), finalize=finalize,
              trim_blocks=trim, lstrip_blocks=lstrip)
    if not allow_undefined:
        kw["undefined"] = jinja2.StrictUndefined
    env = jinja2.sandbox.SandboxedEnvironment(**kw)
    env.filters.update({
        "json": f_json, "yaml": f_yaml, "tojson": f_tojson, "unique": f_unique,
        "min": min, "max": max, "sequence": f_sequence, "to_bool": f_to_bool,
        "quote": shlex.quote, "regex_search": f_regex_search, "regex_match": f_regex_match,
        "regex_replace": f_regex_replace, "md5": lambda s: hashlib.md5(s.encode()).hexdigest(),
        "sha256": lambda s: hashlib.sha256(s.encode()).hexdigest(),
        "yaml_dquote": f_yaml_dquote, "yaml_encode": f_yaml_encode,
        "load_yaml": f_load_yaml, "load_json": f_load_json, "load_text": lambda v: str(v),
        "skip": lambda v: "",
        "zip": zip, "product": __import__("itertools").product,
    })
    env.tests["match"] = t_match
    env.tests["equalto"] = lambda a, b: a == b
    env.tests["list"] = lambda v: isinstance(v, (list, tuple, set))
    env.globals["odict"] = OrderedDict

    def jinja_raise(msg):
        raise jinja2.exceptions.TemplateError(msg)
    env.globals["raise"] = jinja_raise
    return env


def render(case):
    files = case.get("files", {})
    env = make_env(files, case.get("allow_undefined", False), case.get("trim_blocks", False),
                   case.get("lstrip_blocks", False))
    src = case["template"]
    ctx = copy.deepcopy(case.get("vars", {}))
    if case.get("salt"):
        ctx["salt"] = fake_salt(ctx)
    env.globals.update(ctx)
    newline = "\n" if src.endswith("\n") else ""
    try:
        out = env.from_string(src).render(**ctx)
        return {"output": out + newline}
    except jinja2.exceptions.UndefinedError as exc:
        return {"error": f"Jinja variable {exc}", "line": error_line(exc)}
    except (jinja2.exceptions.TemplateRuntimeError, jinja2.exceptions.TemplateSyntaxError) as exc:
        msg = exc.message if isinstance(exc, jinja2.exceptions.TemplateSyntaxError) else str(exc)
        return {"error": f"Jinja syntax error: {msg}", "line": error_line(exc)}
    except Exception as exc:  # noqa
        return {"error": f"Jinja error: {exc}", "line": error_line(exc)}


def error_line(exc):
    if getattr(exc, "lineno", None):
        return exc.lineno
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.name in ("top-level template code", "template", "<module>")]
    return frames[-1].lineno if frames else 0


from cases import CASES  # noqa: E402

out = []
lazy = re.compile(r" at 0x[0-9a-f]+>|generator", re.I)
for c in CASES:
    res = render(c)
    if c.get("drop_if_lazy") and lazy.search(res.get("output", "") + res.get("error", "")):
        continue  # a generator's repr: not something to conform to
    c = dict(c)
    c.pop("drop_if_lazy", None)
    c.update(res)
    out.append(c)
json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
