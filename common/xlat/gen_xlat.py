#!/usr/bin/env python3
"""Generate cutrace's name tables (strace xlat style).

Inputs:
  common/xlat/<family>.in      one table per family, each naming its source
  <cuda>/cuda.h         CUresult       (enum cudaError_enum ... } CUresult;)
  <cuda>/driver_types.h cudaError_t    (enum cudaError { ... };)
  <errno.h>             E* macros, read through the C preprocessor (cc -dM -E)

Outputs (under --out-dir):
  xlat_tables.c              data for tracer/decode/xlat.c (compiled into the decode room)
  cutrace_gen/xlat_data.h    declarations of that data
  cutrace_gen/shim_tables.h  static const data for the shim (only <stdint.h>)
  cutrace_gen/codes.h        the result codes as named constants (CT_ + the
                             header's name), for code that tests a code

Every table is validated here (duplicates, overlapping version ranges, sane
sentinel values) so that a bad edit fails the build with file:line.
Python 3 standard library only.
"""

import argparse
import os
import re
import subprocess
import sys

PROG = "gen_xlat.py"


class GenError(Exception):
    pass


def fail(where, msg):
    raise GenError("%s: %s" % (where, msg))


# ---------------------------------------------------------------- parsing ----

def read_in(path):
    """Yield (where, tokens) for each data line of an .in file."""
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if line:
                yield "%s:%d" % (path, no), line.split()


def parse_int(where, s):
    try:
        return int(s, 0)
    except ValueError:
        fail(where, "not a number: %r" % s)


def parse_ver(where, s):
    """'580.65.06' -> 580065006 (major*1e6 + minor*1e3 + patch)."""
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?", s)
    if not m:
        fail(where, "bad driver version %r" % s)
    maj, mnr, pat = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    if mnr > 999 or pat > 999 or maj > 4294:
        fail(where, "driver version out of range: %r" % s)
    return maj * 1000000 + mnr * 1000 + pat


def split_kv(where, tokens, allowed):
    """Split key=value tokens; bare words go into the returned 'words' set."""
    kv, words = {}, set()
    for t in tokens:
        if "=" in t:
            k, v = t.split("=", 1)
            if k not in allowed:
                fail(where, "unknown key %r" % k)
            if k in kv:
                fail(where, "key %r given twice" % k)
            kv[k] = v
        else:
            words.add(t)
    return kv, words


def check_name(where, name):
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        fail(where, "bad name %r" % name)


def version_range(where, kv):
    since = parse_ver(where, kv["since"]) if "since" in kv else 0
    until = parse_ver(where, kv["until"]) if "until" in kv else 0
    if until and until <= since:
        fail(where, "until= is not after since=")
    return since, until


def overlaps(a, b):
    """Do version ranges [since, until) overlap (until 0 = open ended)?"""
    a0, a1 = a
    b0, b1 = b
    a1 = a1 or 1 << 40
    b1 = b1 or 1 << 40
    return a0 < b1 and b0 < a1


def load_value_names(path):
    """VALUE NAME tables (rm_class.in, rm_ctrl.in, nvml_return.in)."""
    rows, seen_v, seen_n = [], {}, {}
    for where, t in read_in(path):
        if len(t) != 2:
            fail(where, "expected VALUE NAME")
        v, n = parse_int(where, t[0]), t[1]
        check_name(where, n)
        if v in seen_v:
            fail(where, "value 0x%X already named %s (%s)" % (v, seen_v[v][1], seen_v[v][0]))
        if n in seen_n:
            fail(where, "name %s already used (%s)" % (n, seen_n[n]))
        seen_v[v], seen_n[n] = (where, n), where
        rows.append((v, n))
    if not rows:
        fail(path, "empty table")
    return sorted(rows)


def load_pci_nvidia(path):
    """DEVID CHIP [PRODUCT...] rows (pci_nvidia.in): one row per device id."""
    rows, seen = [], {}
    for where, t in read_in(path):
        if len(t) < 2:
            fail(where, "expected DEVID CHIP [PRODUCT...]")
        v = parse_int(where, t[0])
        if v > 0xFFFF:
            fail(where, "device id 0x%X is not 16 bits" % v)
        if not re.match(r"^(GM|GP|GV|TU|GA|AD|GH|GB)[0-9]+[A-Z]*$", t[1]):
            fail(where, "chip %s is not a Maxwell or later chip code" % t[1])
        if v in seen:
            fail(where, "device id 0x%04X already listed (%s)" % (v, seen[v]))
        seen[v] = where
        product = " ".join(t[2:])
        if '"' in product or "\\" in product:
            fail(where, "quote or backslash in the product name")
        rows.append((v, t[1], product))
    if not rows:
        fail(path, "empty table")
    return sorted(rows)


def load_nv_status(path):
    rows = []
    for where, t in read_in(path):
        if len(t) < 2:
            fail(where, "expected VALUE NAME [since=] [until=]")
        v = parse_int(where, t[0])
        check_name(where, t[1])
        kv, words = split_kv(where, t[2:], {"since", "until"})
        if words:
            fail(where, "unexpected %s" % " ".join(sorted(words)))
        since, until = version_range(where, kv)
        for r in rows:
            if r["value"] == v and overlaps((since, until), (r["since"], r["until"])):
                fail(where, "0x%X: version range overlaps %s (%s)" % (v, r["name"], r["where"]))
            if r["name"] == t[1] and r["value"] == v:
                fail(where, "duplicate row for %s" % t[1])
        rows.append(dict(value=v, name=t[1], since=since, until=until, where=where))
    need = {0: "NV_OK", 0xFFFF: "NV_ERR_GENERIC"}
    for v, n in need.items():
        if not any(r["value"] == v and r["name"] == n for r in rows):
            fail(path, "sanity: %s (0x%X) missing" % (n, v))
    rows.sort(key=lambda r: (r["value"], r["since"]))
    return rows


ESC_FLAGS = {"array": "CT_ESC_F_ARRAY", "numa_status": "CT_ESC_F_NUMA_STATUS",
             "xfer": "CT_ESC_F_XFER", "unhandled": "CT_ESC_F_UNHANDLED",
             "root": "CT_ESC_F_ROOT_ONLY"}
NODES = {"any": "CT_NODE_RULE_ANY", "ctl": "CT_NODE_RULE_CTL", "gpu": "CT_NODE_RULE_GPU"}


def load_escapes(path, lo, hi):
    rows = []
    for where, t in read_in(path):
        if len(t) < 2:
            fail(where, "expected NAME NR key=value...")
        name, nr = t[0], parse_int(where, t[1])
        check_name(where, name)
        if not lo <= nr <= hi:
            fail(where, "nr %d outside %d..%d for this family" % (nr, lo, hi))
        kv, words = split_kv(where, t[2:], {"size", "elem", "status", "node", "params",
                                            "since", "until", "flags"})
        if words:
            fail(where, "unexpected %s" % " ".join(sorted(words)))
        for k in ("size", "status", "node"):
            if k not in kv:
                fail(where, "missing %s=" % k)
        size = parse_int(where, kv["size"])
        elem = parse_int(where, kv.get("elem", "0"))
        status = -1 if kv["status"] == "-" else parse_int(where, kv["status"])
        if kv["node"] not in NODES:
            fail(where, "node= must be one of %s" % ", ".join(sorted(NODES)))
        flags = [f for f in kv.get("flags", "").split(",") if f]
        for f in flags:
            if f not in ESC_FLAGS:
                fail(where, "unknown flag %r" % f)
        if ("array" in flags) != (elem > 0):
            fail(where, "flags=array goes with elem= (and only with it)")
        if size > 16383:
            fail(where, "size %d does not fit the 14-bit _IOC size field" % size)
        if status >= 0 and size and status + 4 > size:
            fail(where, "status offset %d outside a %d-byte block" % (status, size))
        since, until = version_range(where, kv)
        r = dict(name=name, nr=nr, size=size, elem=elem, status=status, node=kv["node"],
                 params=kv.get("params"), since=since, until=until, flags=flags, where=where)
        for o in rows:
            if o["nr"] == nr and o["size"] == size and overlaps((since, until), (o["since"], o["until"])):
                fail(where, "nr 0x%X size %d: version range overlaps %s" % (nr, size, o["where"]))
        rows.append(r)
    return rows


UVM_WHERE = {"uvm": None, "tools": "CT_UVM_F_TOOLS", "none": "CT_UVM_F_NOT_ROUTED"}


def load_uvm(path):
    """Return (rows, segments): rows as written, segments = per-nr cover of all
    driver versions [0, inf) including 'absent' gaps."""
    rows = []
    for where, t in read_in(path):
        if len(t) < 4:
            fail(where, "expected NAME NR SIZE STATUS key=value...")
        name, nr = t[0], parse_int(where, t[1])
        check_name(where, name)
        if t[2] == "-" and t[3] == "-":
            size, status, noparams = 0, -1, True
        else:
            size, status, noparams = parse_int(where, t[2]), parse_int(where, t[3]), False
            if status + 4 > size:
                fail(where, "rmStatus offset %d outside a %d-byte block" % (status, size))
        kv, words = split_kv(where, t[4:], {"where", "since", "until"})
        if words - {"approx"}:
            fail(where, "unexpected %s" % " ".join(sorted(words - {"approx"})))
        if kv.get("where") not in UVM_WHERE:
            fail(where, "where= must be one of %s" % ", ".join(sorted(UVM_WHERE)))
        since, until = version_range(where, kv)
        for o in rows:
            if o["nr"] == nr:
                if o["name"] != name:
                    fail(where, "nr %d is already %s" % (nr, o["name"]))
                if overlaps((since, until), (o["since"], o["until"])):
                    fail(where, "%s: version range overlaps %s" % (name, o["where"]))
            elif o["name"] == name:
                fail(where, "%s already has nr %d" % (name, o["nr"]))
        rows.append(dict(name=name, nr=nr, size=size, status=status, noparams=noparams,
                         where_=kv["where"], since=since, until=until, where=where))
    for n, s in ((0x30000001, 16), (37, 40)):   # sanity: UVM_INITIALIZE, UVM_REGISTER_GPU
        if not any(r["nr"] == n and r["size"] == s for r in rows):
            fail(path, "sanity: nr 0x%X with size %d missing" % (n, s))

    segs = []
    for nr in sorted({r["nr"] for r in rows}):
        mine = sorted((r for r in rows if r["nr"] == nr), key=lambda r: r["since"])
        at = 0
        for r in mine:
            if r["since"] > at:   # not defined before this row
                segs.append(dict(r, size=0, status=-1, since=at, until=r["since"], absent=True))
            segs.append(dict(r, absent=False))
            at = r["until"]
            if not at:
                break
        if at:                    # removed: absent from 'until' on
            segs.append(dict(mine[-1], size=0, status=-1, since=at, until=0, absent=True))
    return rows, segs


def load_flags(path):
    rows = []
    for where, t in read_in(path):
        check_name(where, t[0])
        if len(t) > 2 or (len(t) == 2 and t[1] != "mode"):
            fail(where, "expected NAME [mode]")
        if any(r[0] == t[0] for r in rows):
            fail(where, "duplicate %s" % t[0])
        rows.append((t[0], len(t) == 2))
    return rows


def load_ctrl_cats(path):
    rows = []
    for where, t in read_in(path):
        if len(t) != 3:
            fail(where, "expected CLASS CATEGORY NAME")
        cls, cat = parse_int(where, t[0]), parse_int(where, t[1])
        check_name(where, t[2])
        if cls > 0xFFFF or cat > 0x3F:
            fail(where, "class must fit 16 bits and category 6 bits")
        if any(r[0] == cls and r[1] == cat for r in rows):
            fail(where, "duplicate category 0x%X of class 0x%X" % (cat, cls))
        rows.append((cls, cat, t[2]))
    return sorted(rows)


# ------------------------------------------------------- header scanners ----

def scan_enum(path, start_re, end_re, item_re, what):
    """Enumerators NAME = number between two marker lines of a header."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(path, "cannot read (%s)" % e.strerror)
    start = next((i for i, l in enumerate(lines) if re.search(start_re, l)), None)
    if start is None:
        fail(path, "%s: start marker /%s/ not found" % (what, start_re))
    end = next((i for i in range(start + 1, len(lines)) if re.search(end_re, lines[i])), None)
    if end is None:
        fail(path, "%s: end marker /%s/ not found" % (what, end_re))
    rows = []
    for i in range(start + 1, end):
        m = re.match(item_re, lines[i])
        if m:
            rows.append((int(m.group(2)), m.group(1)))
    return rows


def scan_cu_results(inc):
    # tracer/decode/ABI.md §9: lines 2511..3179 of CUDA 13.0 cuda.h
    path = os.path.join(inc, "cuda.h")
    rows = scan_enum(path, r"^\s*typedef\s+enum\s+cudaError_enum\b", r"^\s*\}\s*CUresult\s*;",
                     r"^\s+(CUDA_[A-Z0-9_]+)\s*=\s*([0-9]+)", "CUresult")
    check_codes(path, rows, "CUDA_SUCCESS", 40)
    return rows


def scan_cudart_errors(inc):
    path = os.path.join(inc, "driver_types.h")
    rows = scan_enum(path, r"^\s*enum\s+(__device_builtin__\s+)?cudaError\s*\{?\s*$", r"^\s*\}\s*;",
                     r"^\s+(cuda[A-Za-z0-9_]+)\s*=\s*([0-9]+)", "cudaError")
    check_codes(path, rows, "cudaSuccess", 40)
    return rows


def check_codes(where, rows, zero_name, min_count):
    if len(rows) < min_count:
        fail(where, "only %d enumerators found; header layout changed?" % len(rows))
    if (0, zero_name) not in rows:
        fail(where, "%s = 0 not found" % zero_name)
    names = [n for _, n in rows]
    if len(set(names)) != len(names):
        fail(where, "duplicate enumerator names")


def scan_errno(cc):
    """E* macros of <errno.h> through the preprocessor: (name -> value), with
    aliases (EWOULDBLOCK -> EAGAIN) resolved.  Returns (canonical, aliases)."""
    cmd = cc.split() + ["-dM", "-E", "-x", "c", "-"]
    try:
        out = subprocess.run(cmd, input="#include <errno.h>\n", capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fail("errno", "cannot run %r: %s" % (" ".join(cmd), e))
    defs = {}
    for line in out.splitlines():
        m = re.match(r"#define\s+(E[A-Z0-9]+)\s+(\S+)\s*$", line)
        if m:
            defs[m.group(1)] = m.group(2)
    canon, alias = {}, {}
    for n, v in defs.items():
        if re.fullmatch(r"\d+", v):
            canon[n] = int(v)
    for n, v in defs.items():
        if n not in canon and v in canon:
            alias[n] = canon[v]
    if canon.get("EPERM") != 1 or canon.get("ENOENT") != 2 or len(canon) < 100:
        fail("errno", "<errno.h> scan looks wrong (%d names)" % len(canon))
    return canon, alias


# ---------------------------------------------------------------- output ----

HEADER = "/* Generated by common/xlat/gen_xlat.py from %s. Do not edit. */\n"


def c_str(s):
    return "NULL" if s is None else '"%s"' % s


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def by_value(rows):
    """value->name rows sorted by value, first name per value kept."""
    seen, out = set(), []
    for v, n in sorted(rows, key=lambda r: r[0]):
        if v not in seen:
            seen.add(v)
            out.append((v, n))
    return out


def emit_xv(name, rows, comment):
    lines = ["/* %s */" % comment, "const struct ct_gen_xv %s[] = {" % name]
    lines += ['\t{ 0x%Xu, "%s" },' % (v, n) for v, n in rows]
    lines += ["};", "const unsigned %s_n = %d;" % (name, len(rows)), ""]
    return lines


def gen_tables_c(t):
    L = [HEADER % "common/xlat/<family>.in, cuda.h, driver_types.h and <errno.h>",
         "#define _GNU_SOURCE",
         "#include <dlfcn.h>",
         "#include <fcntl.h>",
         "#include <stddef.h>",
         '#include "cutrace_gen/xlat_data.h"', ""]
    L += emit_xv("ct_gen_errno_by_value", by_value([(v, n) for n, v in t["errno"][0].items()]),
                 "errno (cc -dM -E <errno.h>), canonical names, sorted by value")
    L += emit_xv("ct_gen_cu_result_by_value", by_value(t["cu"]), "CUresult (cuda.h), sorted by value")
    L += emit_xv("ct_gen_cudart_by_value", by_value(t["cudart"]), "cudaError_t (driver_types.h), sorted by value")
    L += emit_xv("ct_gen_nvml_by_value", t["nvml"], "nvmlReturn_t (nvml_return.in), sorted by value")
    L += emit_xv("ct_gen_rm_class_by_value", t["cls"], "RM classes (rm_class.in), sorted by value")
    L += ["/* NVIDIA PCI device ids (pci_nvidia.in, from pci.ids), sorted by id */",
          "const struct ct_gen_pci ct_gen_pci_nvidia[] = {"]
    L += ['\t{ 0x%04Xu, "%s", "%s" },' % r for r in t["pci"]]
    L += ["};", "const unsigned ct_gen_pci_nvidia_n = %d;" % len(t["pci"]), ""]
    L += emit_xv("ct_gen_rm_ctrl_by_value", t["ctrl"], "RM control commands (rm_ctrl.in), sorted by value")

    L += ["/* NV_STATUS (nv_status.in), sorted by value then since */",
          "const struct ct_gen_nvst ct_gen_nv_status_rows[] = {"]
    L += ['\t{ 0x%Xu, %du, %du, "%s" },' % (r["value"], r["since"], r["until"], r["name"])
          for r in t["nvst"]]
    L += ["};", "const unsigned ct_gen_nv_status_rows_n = %d;" % len(t["nvst"]), ""]

    L += ["/* RM control categories (rm_ctrl_cat.in), sorted by class then category */",
          "const struct ct_gen_ctrl_cat ct_gen_rm_ctrl_cats[] = {"]
    L += ['\t{ 0x%04Xu, 0x%02Xu, "%s" },' % r for r in t["cats"]]
    L += ["};", "const unsigned ct_gen_rm_ctrl_cats_n = %d;" % len(t["cats"]), ""]

    L += ["/* frontend + RM escapes (nv_esc.in, nv_esc_rm.in), sorted by nr, since, size */",
          "const struct ct_nv_escape ct_gen_nv_escapes[] = {"]
    for r in sorted(t["esc"], key=lambda r: (r["nr"], r["since"], r["size"])):
        flags = " | ".join(ESC_FLAGS[f] for f in r["flags"]) or "0"
        L.append('\t{ .name = "%s", .nr = 0x%02X, .size = %d, .elem_size = %d, .status_off = %d,\n'
                 '\t  .node = %s, .params = %s, .since = %du, .until = %du, .flags = %s },'
                 % (r["name"], r["nr"], r["size"], r["elem"], r["status"], NODES[r["node"]],
                    c_str(r["params"]), r["since"], r["until"], flags))
    L += ["};", "const unsigned ct_gen_nv_escapes_n = %d;" % len(t["esc"]), ""]

    L += ["/* nvidia-uvm commands (uvm_cmd.in): one row per version range covering all",
          " * versions, sorted by nr then since; absent ranges have CT_UVM_F_ABSENT */",
          "const struct ct_uvm_cmd ct_gen_uvm_cmds[] = {"]
    for s in t["uvm_segs"]:
        fl = [UVM_WHERE[s["where_"]]] if UVM_WHERE[s["where_"]] else []
        if s["absent"]:
            fl.append("CT_UVM_F_ABSENT")
        elif s["noparams"]:
            fl.append("CT_UVM_F_NO_PARAMS")
        L.append('\t{ .name = "%s", .nr = 0x%Xu, .size = %d, .status_off = %d, .since = %du, '
                 '.until = %du, .flags = %s },'
                 % (s["name"], s["nr"], s["size"], s["status"], s["since"], s["until"],
                    " | ".join(fl) or "0"))
    L += ["};", "const unsigned ct_gen_uvm_cmds_n = %d;" % len(t["uvm_segs"]), ""]

    for var, rows, hdr in (("ct_gen_open_flags", t["oflags"], "fcntl.h"),
                           ("ct_gen_dlopen_flags", t["dlflags"], "dlfcn.h")):
        L += ["/* %s names (%s.in); values from <%s> of this platform, in table order */"
              % (var[7:], var[7:], hdr), "const struct ct_gen_flag %s[] = {" % var]
        for n, mode in rows:
            L += ["#ifdef %s" % n, '\t{ (uint32_t)(%s), "%s", %d },' % (n, n, int(mode)), "#endif"]
        L += ["};", "const unsigned %s_n = sizeof %s / sizeof %s[0];" % (var, var, var), ""]
    return "\n".join(L)


DATA_H = HEADER % "common/xlat/gen_xlat.py" + """\
/* Data behind tracer/decode/xlat.c; the functions in xlat.h are the interface. */
#ifndef CUTRACE_GEN_XLAT_DATA_H
#define CUTRACE_GEN_XLAT_DATA_H

#include <stdint.h>
#include "xlat.h"

struct ct_gen_xv { uint32_t value; const char *name; };            /* sorted by value */
struct ct_gen_nvst { uint32_t value, since, until; const char *name; };
struct ct_gen_flag { uint32_t value; const char *name; uint8_t mode; };
struct ct_gen_ctrl_cat { uint32_t cls, cat; const char *name; };
struct ct_gen_pci { uint32_t id; const char *chip, *product; };        /* sorted by id */

#define CT_GEN_XV(n) extern const struct ct_gen_xv n[]; extern const unsigned n##_n;
CT_GEN_XV(ct_gen_errno_by_value)
CT_GEN_XV(ct_gen_cu_result_by_value)
CT_GEN_XV(ct_gen_cudart_by_value)
CT_GEN_XV(ct_gen_nvml_by_value)
CT_GEN_XV(ct_gen_rm_class_by_value)
CT_GEN_XV(ct_gen_rm_ctrl_by_value)
#undef CT_GEN_XV

extern const struct ct_gen_nvst ct_gen_nv_status_rows[];
extern const unsigned ct_gen_nv_status_rows_n;
extern const struct ct_gen_ctrl_cat ct_gen_rm_ctrl_cats[];
extern const unsigned ct_gen_rm_ctrl_cats_n;
extern const struct ct_nv_escape ct_gen_nv_escapes[];
extern const unsigned ct_gen_nv_escapes_n;
extern const struct ct_uvm_cmd ct_gen_uvm_cmds[];
extern const unsigned ct_gen_uvm_cmds_n;
extern const struct ct_gen_flag ct_gen_open_flags[];
extern const unsigned ct_gen_open_flags_n;
extern const struct ct_gen_flag ct_gen_dlopen_flags[];
extern const unsigned ct_gen_dlopen_flags_n;
extern const struct ct_gen_pci ct_gen_pci_nvidia[];
extern const unsigned ct_gen_pci_nvidia_n;

#endif
"""


def gen_shim_h(t):
    L = [HEADER % "common/xlat/<family>.in, cuda.h, driver_types.h and <errno.h>",
         "/*",
         " * Static tables for the shim, which cannot link the tracer.  Only constant",
         " * data and <stdint.h>; every array is sorted so it can be bsearch()ed.",
         " */",
         "#ifndef CUTRACE_GEN_SHIM_TABLES_H",
         "#define CUTRACE_GEN_SHIM_TABLES_H",
         "",
         "#include <stdint.h>",
         "",
         "#if defined(__GNUC__)",
         "#define CT_GEN_UNUSED __attribute__((unused))",
         "#else",
         "#define CT_GEN_UNUSED",
         "#endif",
         "",
         "/* nvidia-uvm params size per command and driver version: sorted by nr, then",
         " * min_drv ascending; a row holds from min_drv (0 = oldest known) up to the next",
         " * row of the same nr.  size 0 = not defined in that range (or no params).",
         " * Driver version code: major*1000000 + minor*1000 + patch. */",
         "struct ct_gen_uvm_size { uint32_t nr; uint32_t min_drv; uint32_t size; int32_t status_off; };",
         "static const struct ct_gen_uvm_size ct_gen_uvm_sizes[] CT_GEN_UNUSED = {"]
    L += ["\t{ 0x%Xu, %du, %du, %d }, /* %s */" % (s["nr"], s["since"], s["size"], s["status"],
                                                  s["name"] + (" (absent)" if s["absent"] else ""))
          for s in t["uvm_segs"]]
    L += ["};", "#define CT_GEN_UVM_SIZES_N %du" % len(t["uvm_segs"]), "",
          "/* Where frontend/RM escapes carry an NV_STATUS: sorted by nr, size, then",
          " * min_drv; size 0 = any size.  A row holds from min_drv up to the next row",
          " * of the same nr and size (the first row also for older drivers).  Only real",
          " * NV_STATUS fields: NUMA_INFO's NUMA state is left out. */",
          "struct ct_gen_esc_status { uint32_t nr; uint32_t size; uint32_t min_drv; int32_t status_off; };",
          "static const struct ct_gen_esc_status ct_gen_esc_status[] CT_GEN_UNUSED = {"]
    L += ["\t{ 0x%02Xu, %du, %du, %d }, /* %s */" % r for r in t["esc_status"]]
    L += ["};", "#define CT_GEN_ESC_STATUS_N %du" % len(t["esc_status"]), "",
          "/* ioctl names for injection rules: ns 1 = NV frontend/RM escape (by _IOC_NR),",
          " * ns 2 = nvidia-uvm command number.  Sorted by name (strcmp). */",
          "#define CT_GEN_NS_NV 1",
          "#define CT_GEN_NS_UVM 2",
          "struct ct_gen_ioctl_name { const char *name; uint8_t ns; uint32_t nr; };",
          "static const struct ct_gen_ioctl_name ct_gen_ioctl_names[] CT_GEN_UNUSED = {"]
    L += ['\t{ "%s", %d, 0x%Xu },' % r for r in t["ioctl_names"]]
    L += ["};", "#define CT_GEN_IOCTL_NAMES_N %du" % len(t["ioctl_names"]), "",
          "/* errno names incl. aliases (EWOULDBLOCK), sorted by name */",
          "struct ct_gen_errno { const char *name; int value; };",
          "static const struct ct_gen_errno ct_gen_errnos[] CT_GEN_UNUSED = {"]
    L += ['\t{ "%s", %d },' % r for r in t["errno_names"]]
    L += ["};", "#define CT_GEN_ERRNOS_N %du" % len(t["errno_names"]), "",
          "/* result codes by name (sorted by name) */",
          "struct ct_gen_code { const char *name; int value; };"]
    for var, rows, what in (("ct_gen_cu_results", t["cu"], "CUresult (cuda.h)"),
                            ("ct_gen_cudart_errors", t["cudart"], "cudaError_t (driver_types.h)"),
                            ("ct_gen_nvml_returns", t["nvml"], "nvmlReturn_t"),
                            ("ct_gen_nv_status", t["nvst_names"],
                             "NV_STATUS: newest value of every name, old-only names included")):
        rows = sorted((n, v) for v, n in rows)
        L += ["/* %s */" % what, "static const struct ct_gen_code %s[] CT_GEN_UNUSED = {" % var]
        L += ['\t{ "%s", %d },' % r for r in rows]
        L += ["};", "#define %s_N %du" % (var.upper(), len(rows)), ""]
    L += ["#endif", ""]
    return "\n".join(L)


def gen_codes_h(t):
    """enum constants CT_<name> = value for CUresult, cudaError_t, nvmlReturn_t:
    the diagnosis names the codes it tests instead of writing numbers."""
    L = [HEADER % "cuda.h, driver_types.h and common/xlat/nvml_return.in",
         "#ifndef CUTRACE_GEN_CODES_H", "#define CUTRACE_GEN_CODES_H", ""]
    for what, key, enum in (("CUresult (cuda.h)", "cu", "ct_cu_result_code"),
                            ("cudaError_t (driver_types.h)", "cudart", "ct_cudart_code"),
                            ("nvmlReturn_t (common/xlat/nvml_return.in)", "nvml", "ct_nvml_code")):
        L += ["/* %s */" % what, "enum %s {" % enum]
        L += ["\tCT_%s = %d," % (n, v) for v, n in sorted(t[key])]
        L += ["};", ""]
    L += ["#endif", ""]
    return "\n".join(L)


def build(args):
    d = args.in_dir
    t = {}
    t["errno"] = scan_errno(args.cc)
    t["cu"] = scan_cu_results(args.cuda_include)
    t["cudart"] = scan_cudart_errors(args.cuda_include)
    t["nvml"] = load_value_names(os.path.join(d, "nvml_return.in"))
    t["cls"] = load_value_names(os.path.join(d, "rm_class.in"))
    t["ctrl"] = load_value_names(os.path.join(d, "rm_ctrl.in"))
    t["cats"] = load_ctrl_cats(os.path.join(d, "rm_ctrl_cat.in"))
    t["nvst"] = load_nv_status(os.path.join(d, "nv_status.in"))
    t["esc"] = (load_escapes(os.path.join(d, "nv_esc.in"), 200, 255)
                + load_escapes(os.path.join(d, "nv_esc_rm.in"), 0, 199))
    uvm_rows, t["uvm_segs"] = load_uvm(os.path.join(d, "uvm_cmd.in"))
    t["oflags"] = load_flags(os.path.join(d, "open_flags.in"))
    t["dlflags"] = load_flags(os.path.join(d, "dlopen_flags.in"))
    t["pci"] = load_pci_nvidia(os.path.join(d, "pci_nvidia.in"))

    # NV_STATUS names: each name once, with its newest value
    newest = {}
    for r in t["nvst"]:
        key = (r["until"] == 0, r["until"])
        if r["name"] not in newest or key > newest[r["name"]][0]:
            newest[r["name"]] = (key, r["value"])
    t["nvst_names"] = [(v, n) for n, (_, v) in newest.items()]

    names = {}
    for r in t["esc"]:
        names.setdefault(r["name"], set()).add((1, r["nr"]))
    for r in uvm_rows:
        names.setdefault(r["name"], set()).add((2, r["nr"]))
    for n, s in names.items():
        if len(s) != 1:
            fail("ioctl names", "%s maps to several numbers %s" % (n, sorted(s)))
    t["ioctl_names"] = sorted((n,) + next(iter(s)) for n, s in names.items())

    t["esc_status"] = sorted((r["nr"], r["size"], r["since"], r["status"], r["name"])
                             for r in t["esc"]
                             if r["status"] >= 0 and "numa_status" not in r["flags"])

    canon, alias = t["errno"]
    t["errno_names"] = sorted(list(canon.items()) + list(alias.items()))

    out = args.out_dir
    write(os.path.join(out, "xlat_tables.c"), gen_tables_c(t))
    write(os.path.join(out, "cutrace_gen", "xlat_data.h"), DATA_H)
    write(os.path.join(out, "cutrace_gen", "shim_tables.h"), gen_shim_h(t))
    write(os.path.join(out, "cutrace_gen", "codes.h"), gen_codes_h(t))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--in-dir", required=True, help="common/xlat")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--cuda-include", required=True, help="directory holding cuda.h")
    ap.add_argument("--cc", default="cc", help="C compiler used to read <errno.h>")
    args = ap.parse_args()
    try:
        build(args)
    except GenError as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
