# A trace's context area (command line, environment, driver lines, notes) is
# validated when the trace is read (issue 17, "Damaged files"): damage marks
# the trace degraded with one line naming it, and the verdict draws nothing
# from what the damage may have taken.  Loaded by itest.py (test, need,
# cutrace_run, rig_env, ...).
import gzip
import json
import os
import random
import shutil
import struct
import subprocess
import tempfile

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "h200-580")
HDR_MINOR = 14   # struct cutrace_header.version_minor
HDR_CTX = 40     # ctx_off, ctx_cap, ctx_len (format.h)


def ctx_fields(b):
    """(offset in the file, tag, len) of every context field"""
    off, cap, ln = struct.unpack_from("<QQQ", b, HDR_CTX)
    out, at = [], 0
    while at + 4 <= ln:
        tag, n = struct.unpack_from("<HH", b, off + at)
        out.append((off + at, tag, n))
        at += 4 + ((n + 3) & ~3)
    return out


def show(path):
    t = subprocess.run([CUTRACE, "show", path], capture_output=True, text=True, timeout=60)
    j = subprocess.run([CUTRACE, "show", "--json", path], capture_output=True, text=True, timeout=60)
    need(t.returncode in (0, 1) and j.returncode in (0, 1), "show failed", t.stderr, j.stderr)
    return t.stdout, json.loads(j.stdout)["processes"][0]


def rig_trace(d, **env):
    r = cutrace_run([PROBE], rig_env(**env))
    files = [f for f in os.listdir(r.dir) if f.endswith(".cutrace")]
    need(len(files) == 1, "one trace", files, r.out, r.err)
    dst = os.path.join(d, "rig.cutrace")
    shutil.copy(os.path.join(r.dir, files[0]), dst)
    cleanup(r)
    return dst


def fixture(d, name):
    dst = os.path.join(d, name + ".cutrace")
    with gzip.open(os.path.join(FIXTURES, name + ".cutrace.gz")) as f, open(dst, "wb") as o:
        o.write(f.read())
    return dst


def damaged(src, d, fn):
    b = bytearray(open(src, "rb").read())
    fn(b)
    dst = os.path.join(d, "bad.cutrace")
    open(dst, "wb").write(b)
    return dst


def need_damaged(path, words, what):
    text, p = show(path)
    dmg = p["stats"]["damage"] or ""
    need(p["flags"]["degraded"] and p["context_damaged"], "%s: JSON says degraded" % what, p["flags"], dmg)
    need("the context area is damaged" in dmg and words in dmg, "%s: JSON names the damage (%r)" % (what, words), dmg)
    lines = [l for l in text.splitlines() if "** damaged:" in l]
    need(len(lines) == 1 and "the context area is damaged" in lines[0] and words in lines[0],
         "%s: show says the damage in one line" % what, lines)
    drv = [l for l in text.splitlines() if l.startswith("  driver ")]
    need(drv and "not loaded" not in drv[0], "%s: no 'driver not loaded' from a damaged context" % what, drv)
    v = p["verdict"]
    need("kernel module is not loaded" not in v["summary"], "%s: the verdict concludes nothing from it" % what,
         v["summary"])
    return text, p


@test
def t_context_random_bytes():
    d = tempfile.mkdtemp(prefix="ct_ctx_")
    # rig: a node with no driver behind it; the intact context says no module
    rig = rig_trace(d, FAKENV_DENY="/dev/nvidiactl=ENXIO")
    text, p = show(rig)
    need("kernel module is not loaded" in p["verdict"]["summary"] and not p["flags"]["degraded"],
         "the intact rig trace: module not loaded, not degraded", p["verdict"], p["flags"])
    # the real H200 probe (module loaded) and i15 (libcuda missing, module loaded)
    srcs = [rig, fixture(d, "probe"), fixture(d, "i15")]
    for src in srcs:
        for seed in (1, 2, 3, 4, 5, 17, 1234):
            def rnd(b, seed=seed):
                off, cap, ln = struct.unpack_from("<QQQ", b, HDR_CTX)
                r = random.Random(seed)
                b[off:off + ln] = bytes(r.randrange(256) for _ in range(ln))
            need_damaged(damaged(src, d, rnd), "", "%s seed %d" % (os.path.basename(src), seed))
    shutil.rmtree(d, ignore_errors=True)


@test
def t_context_bad_lengths_and_text():
    d = tempfile.mkdtemp(prefix="ct_ctx_")
    rig = rig_trace(d)
    pr = fixture(d, "probe")
    for src in (rig, pr):
        fl = ctx_fields(open(src, "rb").read())
        name = os.path.basename(src)
        # the first field says more bytes than the context holds
        def too_long(b):
            struct.pack_into("<H", b, fl[0][0] + 2, 0xfff0)
        need_damaged(damaged(src, d, too_long), "past the", name + ": too long")
        # the kernel field (uname: text) grown past what uname can hold, over
        # the fields behind it
        kern = [f for f in fl if f[1] == 4][0]
        def over_max(b):
            struct.pack_into("<H", b, kern[0] + 2, 200)
        need_damaged(damaged(src, d, over_max), "the kernel field", name + ": over its bound")
        # invalid UTF-8 in the kernel release
        def bad_utf8(b):
            b[kern[0] + 4:kern[0] + 6] = b"\xc3\x28"
        need_damaged(damaged(src, d, bad_utf8), "not UTF-8", name + ": invalid UTF-8")
        # the fields before the damage are still read
        _, p = show(damaged(src, d, bad_utf8))
        need(p["exe"], "the exe, before the damage, is kept", p["exe"])
    shutil.rmtree(d, ignore_errors=True)


@test
def t_context_unknown_key():
    d = tempfile.mkdtemp(prefix="ct_ctx_")
    rig = rig_trace(d)

    def extra(minor):
        def fn(b):
            off, cap, ln = struct.unpack_from("<QQQ", b, HDR_CTX)
            b[off + ln:off + ln + 12] = struct.pack("<HH", 200, 7) + b"future\x21" + b"\0"
            struct.pack_into("<Q", b, HDR_CTX + 16, ln + 12)
            if minor is not None:
                struct.pack_into("<H", b, HDR_MINOR, minor)
        return fn
    # a key of a newer minor version: kept and shown as such, not damage
    text, p = show(damaged(rig, d, extra(99)))
    need(not p["context_damaged"] and not p["flags"]["degraded"], "a newer minor's key is not damage", p["flags"])
    need(p["context_unknown"] == [{"key": 200, "value": "future!"}], "JSON lists the unknown key",
         p["context_unknown"])
    need(any(l.startswith("  unknown  key 200 (format 1.99") and "future!" in l for l in text.splitlines()),
         "show lists the unknown key", text[:1500])
    # the same key in a file of this version: damage
    need_damaged(damaged(rig, d, extra(None)), "unknown key 200", "unknown key, this version")
    shutil.rmtree(d, ignore_errors=True)
