"""NVIDIA ioctl decoding end to end: shim + fake kernel + decoder.

tests/nvx/nvx.c issues raw ioctls on /dev/nvidiactl, /dev/nvidia0 and
/dev/nvidia-uvm under the rig; `cutrace show --json` must say what each one
asked and what the fake kernel (tests/rig/fakenv.c) answered.  Two tests
patch a recorded trace's context the way another machine would have written
it (the /proc/devices lines, the driver version) and check that show follows.

Loaded by itest.py, which provides test, need, Fail, cutrace_run, rig_env,
events, first, cleanup, CUTRACE, PROGS, ...
"""
import glob
import gzip
import json
import os
import shutil
import struct
import subprocess
import tempfile

NVX = os.path.join(PROGS, "nvx")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "h200-580")

# shim/include/cutrace/format.h: header offsets and context tags
HDR_CTX_OFF, HDR_CTX_CAP, HDR_CTX_LEN = 40, 48, 56
CTX_NV_VERSION, CTX_NV_MODVERSION, CTX_DEVICES = 5, 6, 8


def nvx(steps, **env):
    """Run nvx under `cutrace run` with the fake kernel (2 GPUs unless told)."""
    env.setdefault("FAKENV_GPUS", "2")
    r = cutrace_run([NVX] + list(steps), rig_env(**env))
    need(r.rc == 0, "nvx failed rc=%d" % r.rc, r.out, r.err)
    return r


def ioctls(p):
    return events(p, "ioctl")


def one(p, pred, what):
    hits = [e for e in ioctls(p) if pred(e)]
    need(len(hits) == 1, "want one ioctl %s, got %d" % (what, len(hits)),
         [(e.get("name"), e.get("detail")) for e in ioctls(p)])
    return hits[0]


def named(p, name):
    return one(p, lambda e: e.get("name") == name, "named %r" % name)


def show_json(path):
    p = subprocess.run([CUTRACE, "show", "--json", path], capture_output=True, text=True)
    need(p.returncode in (0, 1), "show --json %s failed rc=%d" % (path, p.returncode), p.stderr)
    return json.loads(p.stdout)


# ---- context patching: a trace as another machine would have written it ---------------

def ctx_fields(buf):
    """[(offset of the field header, tag, data)] of the context."""
    off, cap, used = struct.unpack_from("<QQQ", buf, HDR_CTX_OFF)
    need(used <= cap, "context length %d over its capacity %d" % (used, cap))
    out, p = [], off
    while p + 4 <= off + used:
        tag, ln = struct.unpack_from("<HH", buf, p)
        out.append((p, tag, bytes(buf[p + 4:p + 4 + ln])))
        p += 4 + ((ln + 3) & ~3)
    return out


def ctx_add(buf, tag, data):
    """Append one context field (there is room: the shim reserves ctx_cap)."""
    off, cap, used = struct.unpack_from("<QQQ", buf, HDR_CTX_OFF)
    size = 4 + ((len(data) + 3) & ~3)
    need(used + size <= cap, "no room in the context for %r" % data)
    p = off + used
    struct.pack_into("<HH", buf, p, tag, len(data))
    buf[p + 4:p + size] = data + b"\0" * (size - 4 - len(data))
    struct.pack_into("<Q", buf, HDR_CTX_LEN, used + size)


def ctx_replace(buf, tags, old, new):
    """Replace old by new (same length) inside the context fields with these tags."""
    assert len(old) == len(new)
    n = 0
    for p, tag, data in ctx_fields(buf):
        if tag in tags and old in data:
            buf[p + 4:p + 4 + len(data)] = data.replace(old, new)
            n += 1
    return n


def trace_file(r):
    files = glob.glob(os.path.join(r.dir, "**", "*.cutrace"), recursive=True)
    need(len(files) == 1, "want one trace file", files)
    return files[0]


# ---- failures through the fake kernel ------------------------------------------------

@test
def t_decode_rm_free_status():
    r = nvx(["ctl", "client", "free_bad"], FAKENV_RM_FREE_STATUS="0xbad=0x33")
    p = r.proc("nvx")
    e = named(p, "NV_ESC_RM_FREE")
    need(e["result"] == 0 and not e["ok"], "RM_FREE returned 0 with a failing status: not ok", e)
    need(e["status"] == 0x33 and e["status_name"] == "NV_ERR_INVALID_OBJECT_HANDLE", "status", e)
    need(not e["status_is_warning"], "a failure is no warning", e)
    need("0xbad -> NV_ERR_INVALID_OBJECT_HANDLE" in e["detail"], "detail names the handle and status", e)
    c = named(p, "NV_ESC_RM_ALLOC NV01_ROOT_CLIENT")
    need(c["ok"] and c["status_name"] == "NV_OK", "the client allocation before it", c)
    cleanup(r)


@test
def t_decode_xfer_wrapped_rm():
    # the kernel version only reaches the trace through the strings behind
    # the XFER-wrapped GET_BUILD_VERSION's pointers
    r = nvx(["ctl", "client", "xfer_bv", "xfer_alloc"], FAKENV_KERNEL_VERSION="575.51.02")
    need("xfer_bv driver=575.51.02" in r.out, "the fake kernel answered", r.out)
    p = r.proc("nvx")
    bv = named(p, "NV_ESC_RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION")
    need(bv["ok"] and bv["status_name"] == "NV_OK", "GET_BUILD_VERSION via XFER ok", bv)
    need(bv["detail"] == "via XFER -> driver 575.51.02", "the driver string decoded", bv)
    need(bv["args"].get("xfer_cmd") is not None, "an XFER header recorded", bv["args"])
    need(bv["args"].get("string0", "").startswith("575.51.02"), "string0 captured", bv["args"])
    need(bv["args"].get("string2", "").startswith("NVIDIA UNIX Open Kernel Module"), "title captured",
         bv["args"])
    al = named(p, "NV_ESC_RM_ALLOC NV01_DEVICE_0")
    need(al["ok"] and al["detail"].startswith("via XFER -> hObject 0x"), "RM_ALLOC via XFER", al)
    need(al["detail"].endswith(" deviceId 1"), "the allocation parameters behind the inner block", al)
    cleanup(r)


@test
def t_decode_block_sizes():
    r = nvx(["ctl", "client", "short", "oversized"])
    p = r.proc("nvx")
    short = one(p, lambda e: e["name"].startswith("NV_ESC_RM_CONTROL"), "RM_CONTROL")
    need(short["errno_name"] == "EINVAL" and not short["ok"], "the kernel refused the short block", short)
    need("short or oversized parameter block: 24 bytes" in short["detail"] and "expects 32" in short["detail"],
         "short block warning", short)
    big = named(p, "NV_ESC_RM_FREE")
    need(big["errno_name"] == "EINVAL", "the kernel refused the oversized block", big)
    need("short or oversized parameter block: 24 bytes" in big["detail"] and "expects 16" in big["detail"],
         "oversized block warning", big)
    need("status" not in short and "status" not in big, "a refused block carries no driver status", short, big)
    cleanup(r)


@test
def t_decode_wrong_node():
    r = nvx(["ctl", "client", "gpu", "wrong_node", "fabric"])
    p = r.proc("nvx")
    calls = [e for e in ioctls(p) if "GET_FABRIC_STATUS" in e["name"]]
    need(len(calls) == 2, "two GET_FABRIC_STATUS calls", [e["name"] for e in ioctls(p)])
    wrong, right = calls
    need(wrong["node"] == "nvidia0" and wrong["errno_name"] == "EINVAL", "sent to nvidia0", wrong)
    need("wrong node: RM_CONTROL must go to /dev/nvidiactl, sent to nvidia0" in wrong["detail"],
         "the wrong-node warning", wrong)
    need(right["node"] == "nvidiactl" and right["ok"] and "wrong node" not in right.get("detail", ""),
         "the same control on nvidiactl", right)
    cleanup(r)


@test
def t_decode_version_mismatch():
    r = nvx(["ctl", "version=535.183.01"])
    need("version kernel=580.159.04" in r.out, "the fake kernel wrote its version back", r.out)
    p = r.proc("nvx")
    e = named(p, "NV_ESC_CHECK_VERSION_STR")
    need(e["errno_name"] == "EINVAL" and not e["ok"], "a mismatch is -EINVAL", e)
    need("client 535.183.01" in e["detail"] and "kernel 580.159.04" in e["detail"],
         "both version strings shown", e)
    need("MISMATCH" in e["detail"], "the result shown", e)
    cleanup(r)


@test
def t_decode_nv_warning():
    r = nvx(["ctl", "client", "fabric"], FAKENV_RM_CONTROL_STATUS="0x136=0x10006")
    p = r.proc("nvx")
    e = named(p, "NV_ESC_RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_FABRIC_STATUS")
    need(e["ok"] is True, "an NV_WARN_* status is not a failure", e)
    need(e["status"] == 0x10006 and e["status_name"] == "NV_WARN_NOTHING_TO_DO", "status name", e)
    need(e["status_is_warning"] is True and "(warning)" in e["detail"], "shown as a warning", e)
    cleanup(r)


@test
def t_decode_attach_gpus():
    r = nvx(["ctl", "attach=2"])
    p = r.proc("nvx")
    e = named(p, "NV_ESC_ATTACH_GPUS_TO_FD")
    need(e["ok"] and e["node"] == "nvidiactl", "attached", e)
    # rig_abi.h rig_gpu_id(): GPU n has RM id (n + 1) << 8
    need(e["detail"] == "ids 0x100,0x200", "the two GPU ids decoded", e)
    cleanup(r)


@test
def t_decode_unreadable_block():
    r = nvx(["ctl", "client", "ctl_efault", "xfer_efault"])
    p = r.proc("nvx")
    bad = [e for e in ioctls(p) if e["errno_name"] == "EFAULT"]
    need(len(bad) == 2, "two EFAULT ioctls", [(e["name"], e["errno_name"]) for e in ioctls(p)])
    for e in bad:
        need(e["name"] == "NV_ESC_RM_CONTROL (parameter block unreadable)", "shown as unreadable", e)
        need("RESERVED" not in json.dumps(e) and "idx 0x00" not in json.dumps(e), "no command decoded from nothing", e)
        need(e["record_flags"] & 8, "CT_RF_UNREADABLE recorded", e)
        need("unreadable" in e["detail"], "the warning", e)
    need("via XFER" in bad[1]["detail"], "the XFER-wrapped one says so", bad[1])
    cleanup(r)


# ---- the device map: a renamed node is known by its device number -----------------------

@test
def t_decode_renamed_uvm_node():
    r = nvx(["uvm=/dev/nvidia-foo"], FAKENV_ALIAS="/dev/nvidia-foo=/dev/nvidia-uvm")
    path = trace_file(r)
    op = first(r.proc("nvx"), "open", target="/dev/nvidia-foo")
    need(op["ok"] and op["args"].get("rdev") == "238:0", "the fake kernel answers as nvidia-uvm (238:0)", op)
    buf = bytearray(open(path, "rb").read())
    had_uvm = any(t == CTX_DEVICES and b"nvidia-uvm" in d for _, t, d in ctx_fields(buf))
    if not had_uvm:
        # without the major in the context the path is all there is: not UVM
        names = [e["name"] for e in ioctls(r.proc("nvx"))]
        need(names and not any(n.startswith("UVM_") for n in names),
             "without /proc/devices the renamed node cannot be known", names)
        # what /proc/devices says on a machine with the driver (tracer/decode/ABI.md §8)
        ctx_add(buf, CTX_DEVICES, b"195 nvidia-frontend")
        ctx_add(buf, CTX_DEVICES, b"238 nvidia-uvm")
        with open(path, "wb") as f:
            f.write(buf)
    for doc in (show_json(path), show_json(r.dir)):
        p = doc["processes"][0]
        init = named(p, "UVM_INITIALIZE")
        need(init["node"] == "nvidia-uvm" and init["ok"], "UVM_INITIALIZE on the renamed node", init)
        need(init["status_name"] == "NV_OK", "its rmStatus read", init)
        need("opened as /dev/nvidia-foo but its device 238:0 is nvidia-uvm" in init["detail"],
             "the rename is reported", init)
        need("short or oversized" not in init["detail"], "no size complaint about the shim's guess", init)
        pg = named(p, "UVM_PAGEABLE_MEM_ACCESS")
        need(pg["node"] == "nvidia-uvm", "UVM_PAGEABLE_MEM_ACCESS named", pg)
    txt = subprocess.run([CUTRACE, "show", path], capture_output=True, text=True).stdout
    need("(nvidia-uvm), UVM_INITIALIZE" in txt, "the text timeline names it too", txt[-3000:])
    need('open("/dev/nvidia-foo", O_RDWR' in txt and "(nvidia-uvm 238:0)" in txt,
         "the open of the renamed node is named by its device number", txt[-3000:])
    cleanup(r)


# ---- version-driven decoding from a recorded trace ----------------------------------------

@test
def t_decode_driver_version_from_trace():
    tmp = tempfile.mkdtemp(prefix="ct_it_")
    try:
        with gzip.open(os.path.join(FIXTURES, "probectx.cutrace.gz"), "rb") as f:
            buf = bytearray(f.read())
        orig = os.path.join(tmp, "probectx-580.cutrace")
        with open(orig, "wb") as f:
            f.write(buf)
        # the same trace, as if /proc/driver/nvidia/version had said 535.183.01
        need(ctx_replace(buf, (CTX_NV_VERSION, CTX_NV_MODVERSION), b"580.159.04", b"535.183.01") >= 1,
             "no driver version in the fixture's context")
        old = os.path.join(tmp, "probectx-535.cutrace")
        with open(old, "wb") as f:
            f.write(buf)

        def by_cmd(doc, cmd):
            p = doc["processes"][0]
            hits = [e for e in ioctls(p) if e["name"] == "NV_ESC_RM_CONTROL " + cmd]
            need(hits, "no %s in the fixture" % cmd)
            return hits[0]

        new_doc, old_doc = show_json(orig), show_json(old)
        for cmd in ("NV0000_CTRL_CMD_GPU_GET_PROBED_IDS", "NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2"):
            e = by_cmd(new_doc, cmd)
            need("warning" not in e.get("detail", ""), "580 trace: no size warning", e)
        e = by_cmd(old_doc, "NV0000_CTRL_CMD_GPU_GET_PROBED_IDS")
        need("paramsSize 384" in e["detail"] and "driver 535.183.01 expects 256" in e["detail"],
             "535 table for GET_PROBED_IDS", e)
        e = by_cmd(old_doc, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2")
        need("paramsSize 804" in e["detail"] and "driver 535.183.01 expects 644" in e["detail"],
             "535 table for GET_CLASSLIST_V2", e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
