"""Load pure functions from Salt's source for reference results.

Nothing of Salt is vendored: the functions are read at generation time
from the bare mirror (SALT_GIT, default /work/.mirror/d3zorg+salt/repo)
and executed with small stand-ins for the Salt modules they import.
Needs CPython 3 and PyYAML.
"""

import ast
import copy
import fnmatch
import ipaddress
import logging
import os
import re
import subprocess
import sys
import types
from collections.abc import Mapping

import yaml

logging.disable(logging.CRITICAL)
SALT_GIT = os.environ.get("SALT_GIT", "/work/.mirror/d3zorg+salt/repo")


def source(path):
    return subprocess.run(["git", "--git-dir=" + SALT_GIT, "show", "HEAD:" + path],
                          capture_output=True, text=True, check=True).stdout


def load(path, names, extra=None):
    """Execute the top-level functions and assignments named in names."""
    text = source(path)
    ns = {"re": re, "fnmatch": fnmatch, "log": logging.getLogger("ref"), "ipaddress": ipaddress,
          "DEFAULT_TARGET_DELIM": ":", "copy": copy, "Mapping": Mapping}
    ns.update(extra or {})
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            node.decorator_list = []
            exec(compile(ast.Module([node], []), path, "exec"), ns)
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", None) in names for t in node.targets):
            exec(ast.get_source_segment(text, node), ns)
    return ns


class _Loader(yaml.SafeLoader):
    """SaltYamlSafeLoader keeps timestamps as strings."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_scalar)

salt = types.ModuleType("salt")
salt.utils = types.ModuleType("salt.utils")
salt.utils.yaml = types.SimpleNamespace(safe_load=lambda s: yaml.load(s, Loader=_Loader))
salt.utils.stringutils = types.SimpleNamespace(to_unicode=str)
sys.modules.update({"salt": salt, "salt.utils": salt.utils, "salt.utils.yaml": salt.utils.yaml})
salt.utils.args = types.SimpleNamespace(**{k: v for k, v in load("salt/utils/args.py", {"yamlify_arg"}).items() if k == "yamlify_arg"})
sys.modules["salt.utils.args"] = salt.utils.args

_data = load("salt/utils/data.py", {"traverse_dict_and_list", "subdict_match"}, {"salt": salt})
subdict_match = _data["subdict_match"]
_minions = load("salt/utils/minions.py", {"TARGET_REX", "_nodegroup_regex", "parse_target", "nodegroup_comp"})
nodegroup_comp = _minions["nodegroup_comp"]
salt.utils.data = types.SimpleNamespace(subdict_match=subdict_match)
salt.utils.minions = types.SimpleNamespace(parse_target=_minions["parse_target"], nodegroup_comp=nodegroup_comp)
salt.utils.network = types.SimpleNamespace(in_subnet=load("salt/utils/network.py", {"in_subnet"})["in_subnet"])
salt.utils.dictupdate = types.SimpleNamespace(update=load("salt/utils/dictupdate.py", {"update"})["update"])

MATCHERS = {}
for _name in ["glob_match", "pcre_match", "list_match", "grain_match", "grain_pcre_match",
              "pillar_match", "pillar_pcre_match", "ipcidr_match"]:
    MATCHERS[_name + ".match"] = load("salt/matchers/%s.py" % _name, {"match"}, {"salt": salt})["match"]
MATCHERS["compound_match.match"] = load("salt/matchers/compound_match.py", {"match"},
                                        {"salt": salt, "HAS_RANGE": False, "__context__": {"matchers": MATCHERS}})["match"]


class SaltException(Exception):
    pass


def match_module(opts):
    """salt/modules/match.py as a module object with the given __opts__."""
    text = source("salt/modules/match.py")
    for line in ("import salt.loader\n", "from salt.exceptions import SaltException\n",
                 "from salt.utils.decorators.jinja import jinja_global\n", '@jinja_global("ifelse")\n'):
        text = text.replace(line, "")
    text = text.replace("from salt.defaults import DEFAULT_TARGET_DELIM\n", "DEFAULT_TARGET_DELIM = ':'\n")
    mod = types.ModuleType("salt_match_module")
    mod.__dict__.update({"__context__": {"matchers": MATCHERS}, "__opts__": opts,
                         "SaltException": SaltException, "salt": salt})
    sys.modules[mod.__name__] = mod
    exec(compile(text, "match.py", "exec"), mod.__dict__)
    return mod
