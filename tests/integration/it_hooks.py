"""The one hook list, common/hooks.def (issue 18): what it generates agrees
with what the built shim exports and with the rule grammar the CLI prints.
Loaded by itest.py (test, need, SHIM, CUTRACE in scope)."""
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def hooks_def_rows():
    """{kind: [(name, rule)]} of common/hooks.def's rows, comments removed."""
    with open(os.path.join(ROOT, "common", "hooks.def")) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    rows = {"LIBC": [], "LOADER": [], "CUDA": [], "SYMBOL": [], "RULE": []}
    for m in re.finditer(r"^CT_(LIBC|LOADER|CUDA|SYMBOL|RULE)\(\s*(\w+)((?:\s*,\s*[^,()]+)*)", text, re.M):
        kind, name, rest = m.group(1), m.group(2), [x.strip() for x in m.group(3).split(",")[1:]]
        rule = {"LIBC": 0, "LOADER": 0, "CUDA": 2}.get(kind)
        rows[kind].append((name, rest[rule] if rule is not None and len(rest) > rule else None))
    return rows


def dynamic_exports(lib):
    """names of the defined global/weak dynamic symbols of lib (readelf -W --dyn-syms)"""
    rd = subprocess.run(["readelf", "-W", "--dyn-syms", lib], capture_output=True, text=True)
    need(rd.returncode == 0, "readelf --dyn-syms works", rd.stderr)
    got = set()
    for line in rd.stdout.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) >= 8 and f[0].endswith(":") and f[4] in ("GLOBAL", "WEAK") and f[6] != "UND":
            got.add(f[7].split("@")[0])
    return got


@test
def t_hooks_def_exports():
    """Every hook and symbol row of common/hooks.def is a dynamic export of
    libcutrace.so and nothing else is (readelf --dyn-syms of the built shim);
    every rule a hook names is a CT_RULE row, and every hook a rule targets has
    a call id in format.h's CUTRACE_CALLS."""
    rows = hooks_def_rows()
    want = {n for k in ("LIBC", "LOADER", "CUDA", "SYMBOL") for n, _ in rows[k]}
    need(len(want) >= 40, "hooks.def parsed", sorted(want))
    got = dynamic_exports(SHIM)
    need(got == want, "exports == hooks.def", "extra: %s" % sorted(got - want), "missing: %s" % sorted(want - got))
    rules = [n for n, _ in rows["RULE"]]
    with open(os.path.join(ROOT, "shim", "include", "cutrace", "format.h")) as f:
        ids = set(re.findall(r"^\s*X\(\d+,\s*(\w+),", f.read(), re.M))
    for k in ("LIBC", "LOADER", "CUDA"):
        for name, rule in rows[k]:
            need(rule == "none" or rule in rules, "%s: rule %s is a CT_RULE row" % (name, rule))
            need(rule == "none" or name in ids, "%s: a rule targets it, it has a CUTRACE_CALLS id" % name)
    for r in rules:
        need(any(rule == r for k in ("LIBC", "LOADER", "CUDA") for _, rule in rows[k]),
             "rule %s targets at least one hook" % r)


@test
def t_hooks_def_grammar():
    """The CALL list of the rule grammar (`cutrace run --help-inject`) is the
    CT_RULE rows of common/hooks.def, in order."""
    rows = hooks_def_rows()
    rules = [n for n, _ in rows["RULE"]]
    r = subprocess.run([CUTRACE, "run", "--help-inject"], capture_output=True, text=True)
    need(r.returncode == 0, "cutrace run --help-inject", r.stdout, r.stderr)
    text = r.stdout
    block = text[text.index("  CALL ") + len("  CALL "):text.index("  match ")]
    need(block.split() == rules, "the grammar's CALL list is hooks.def's CT_RULE rows", block.split(), rules)
