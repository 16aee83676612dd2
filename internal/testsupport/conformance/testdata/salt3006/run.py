#!/usr/bin/env python3
"""Run a salt-call implementation over the conformance cases and write its outputs.

Usage: run.py SALT_CALL CASES_DIR OUT_DIR [--only PREFIX ...] [--timeout S]

For each case directory under CASES_DIR (NNN-name/ with cmd, salt/, optional
pillar/, grains, fs/), this does what the expected outputs were recorded with:
wipe /tmp/conf-* and a scratch run dir, copy fs/ onto /, write the minion config
from minion.template (next to this script), and run, as root, from an empty
directory with a minimal environment:

  SALT_CALL --local -c RUN/conf --out=json --log-level=warning --retcode-passthrough ARGS

It writes OUT_DIR/NNN-name.json = {"retcode": N, "output": <parsed JSON or raw text>}.
Compare with compare.py OUT_DIR --expected <the matching expected dir>.
Python 3 standard library only.
"""
import argparse
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
       "LANG": "C.UTF-8", "SHELL": "/bin/sh"}


def grains_flow(case):
    path = os.path.join(case, "grains")
    if not os.path.exists(path):
        return "{}"
    # The grains file is YAML; embed it as a nested block under `grains:`.
    with open(path) as f:
        body = f.read().rstrip("\n")
    return "\n" + "\n".join("  " + line for line in body.splitlines())


def write_config(case, run):
    with open(os.path.join(HERE, "minion.template")) as f:
        tpl = f.read()
    pillar = os.path.join(case, "pillar")
    if not os.path.isdir(pillar):
        pillar = os.path.join(run, "empty-pillar")
        os.makedirs(pillar, exist_ok=True)
    conf = (tpl.replace("@RUN@", run)
               .replace("@SALT_ROOT@", os.path.join(case, "salt"))
               .replace("@PILLAR_ROOT@", pillar)
               .replace("@GRAINS@", grains_flow(case)))
    os.makedirs(os.path.join(run, "conf"), exist_ok=True)
    with open(os.path.join(run, "conf", "minion"), "w") as f:
        f.write(conf)


def clean():
    for p in glob.glob("/tmp/conf-*"):
        shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)


def copy_fs(fs):
    """Copy the case's fs/ tree onto /, which may only add /tmp/conf-*.

    The suite's original run.py did shutil.copytree(fs, "/",
    dirs_exist_ok=True), which also copies the mode of fs/ and fs/tmp onto
    the existing / and /tmp: a checkout's 0755 (or a read-only copy's 0555)
    replaced /tmp's 1777. Here directories that exist already are left as
    they are, and anything outside /tmp/conf-* is refused.
    """
    for top in os.listdir(fs):
        if top != "tmp" or not os.path.isdir(os.path.join(fs, top)):
            sys.exit(f"{fs}/{top}: a case may only bring files under /tmp/conf-*")
        for name in os.listdir(os.path.join(fs, "tmp")):
            if not name.startswith("conf-"):
                sys.exit(f"{fs}/tmp/{name}: a case may only bring files under /tmp/conf-*")
            src, dst = os.path.join(fs, "tmp", name), os.path.join("/tmp", name)
            if os.path.isdir(src) and not os.path.islink(src):
                shutil.copytree(src, dst, symlinks=True)
            else:
                shutil.copy2(src, dst, follow_symlinks=False)


def run_case(salt_call, case, timeout):
    clean()
    fs = os.path.join(case, "fs")
    if os.path.isdir(fs):
        copy_fs(fs)
    run = tempfile.mkdtemp(prefix="conf-run-")
    cwd = tempfile.mkdtemp(prefix="conf-cwd-")
    try:
        write_config(case, run)
        with open(os.path.join(case, "cmd")) as f:
            args = shlex.split(f.read().strip())
        argv = [salt_call, "--local", "-c", os.path.join(run, "conf"), "--out=json",
                "--log-level=warning", "--retcode-passthrough"] + args
        try:
            p = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True,
                               text=True, timeout=timeout)
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            rc, out, err = -1, "", "timeout"
        try:
            output = json.loads(out)
        except ValueError:
            output = out
        return {"retcode": rc, "output": output, "stderr": err[-2000:]}
    finally:
        shutil.rmtree(run, ignore_errors=True)
        shutil.rmtree(cwd, ignore_errors=True)
        clean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("salt_call")
    ap.add_argument("cases")
    ap.add_argument("out")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    salt_call = os.path.abspath(a.salt_call)
    os.makedirs(a.out, exist_ok=True)
    names = sorted(d for d in os.listdir(a.cases) if os.path.isdir(os.path.join(a.cases, d)))
    if a.only:
        names = [n for n in names if any(n.startswith(p) for p in a.only)]
    for name in names:
        res = run_case(salt_call, os.path.abspath(os.path.join(a.cases, name)), a.timeout)
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
    print(f"ran {len(names)} cases into {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
