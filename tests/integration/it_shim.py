"""Integration tests of the shim core (issue 2 audit): opens recorded on
entry, the degraded mark, the no-malloc/stdio/locks import rule, the
reentrancy guard, every hooked entry point in a trace, and the facts of the
real H200 fixtures.  Loaded by itest.py, which puts its helpers (test, need,
Fail, cutrace_run, preload_run, rig_env, base_env, events, first, cleanup,
...) in scope; the programs are in PROG_DIR (tests/programs)."""
import errno
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "h200-580")


def _killed_run(argv, env, secs=2):
    """Run argv under the shim (LD_PRELOAD first), SIGKILLed after secs.
    timeout(1) kills its whole process group, itself included: the status is
    137 or -9."""
    r = preload_run(["timeout", "-s", "KILL", str(secs)] + list(argv), env, timeout=60)
    r.rc = 137 if r.rc == -9 else r.rc
    return r


def _opens(p, target=None):
    return [e for e in p["events"] if e["call"].startswith("open") and (target is None or e["target"] == target)]


# ---------------------------------------------------------------------------------
# 1. an open of an NVIDIA node is recorded on entry
# ---------------------------------------------------------------------------------
@test
def t_shim_open_hang_recorded_on_entry():
    """A real open that never returns (libslowopen.so, preloaded after the
    shim, sleeps in open("/dev/nvidia-uvm")): the enter is in the file before
    the call, so the killed process shows the open entered, never returned."""
    slow = os.path.join(PROGS, "libslowopen.so")
    env = rig_env(SLOWOPEN_PATH="/dev/nvidia-uvm", SLOWOPEN_SEC="60")
    env["LD_PRELOAD"] = slow + ":" + FAKENV
    r = _killed_run([PROBE], env)
    need(r.rc == 137, "timeout should kill the probe held in open (137), got %d" % r.rc, r.out, r.err)
    p = r.proc("cutrace-probe")
    uvm = _opens(p, "/dev/nvidia-uvm")
    need(len(uvm) == 1, "one open of /dev/nvidia-uvm (the held one)", [(e["call"], e["returned"]) for e in uvm])
    o = uvm[0]
    need(o["has_enter"] and not o["returned"] and o["dur_ns"] is None, "the open never returned", o)
    need(not o["injected"], "a real hang is not marked injected", o)
    need(o["args"].get("flags") == "O_RDWR|O_CLOEXEC" and o["args"].get("node") == "nvidia-uvm",
         "the enter record holds the open's arguments", o["args"])
    need(o["depth"] >= 1, "the open is inside cuInit", o)
    need(not first(p, "cuInit")["returned"], "cuInit never returned either")
    ctl = _opens(p, "/dev/nvidiactl")
    need(ctl and ctl[0]["returned"] and ctl[0]["ok"], "the earlier nvidiactl open returned", ctl)
    v = verdict(p)
    need(v["hung"] and v["step"] and v["step"]["call"] == "open", "verdict: hung in the open", v)
    cleanup(r)


@test
def t_shim_open_injected_delay_recorded_on_entry():
    """open:path=/dev/nvidiactl:delay=1h + SIGKILL: the enter (marked
    injected) is written before the delay, so the held open is in the trace."""
    r = _killed_run([PROBE], rig_env(CUTRACE_INJECT="open:path=/dev/nvidiactl:delay=1h"))
    need(r.rc == 137, "timeout should kill the held probe (137), got %d" % r.rc, r.out, r.err)
    p = r.proc("cutrace-probe")
    ctl = _opens(p, "/dev/nvidiactl")
    need(len(ctl) == 1, "one open of /dev/nvidiactl", ctl)
    o = ctl[0]
    need(o["has_enter"] and not o["returned"], "the held open never returned", o)
    need(o["injected"], "the held open is marked injected (on its enter record)", o)
    need(not _opens(p, "/dev/nvidia-uvm") and not events(p, "ioctl"), "nothing after the held open", p["events"][-3:])
    v = verdict(p)
    need(v["hung"] and v["injected"], "verdict: an injected hang", v)
    cleanup(r)


@test
def t_shim_open_duration_excludes_trace_creation():
    """The first recorded event of hook_calls is a failing open of
    /dev/nvidiactl; the trace file (128 MiB, fallocated) is created for it.
    Its duration is the open's, not the creation's."""
    r = preload_run([os.path.join(PROGS, "hook_calls")],
                    rig_env(FAKENV_MISSING="/dev/nvidiactl", CUTRACE_SIZE="128M"))
    p = r.proc("hook_calls")
    need(p["events"], "no events", r.out, r.err)
    o = p["events"][0]
    need(o["call"] == "open" and o["target"] == "/dev/nvidiactl", "the first event is the open", o)
    need(o["returned"] and not o["ok"] and o["errno_name"] == "ENOENT", "ENOENT from the fake kernel", o)
    need(o["dur_ns"] is not None and o["dur_ns"] < 5e6, "a failed open should take < 5 ms, got %r ns" % o["dur_ns"], o)
    for e in _opens(p, "/dev/nvidiactl")[:8]:
        need(e["returned"] and e["errno_name"] == "ENOENT" and e["dur_ns"] < 5e6, "failed open", e)
    cleanup(r)


# ---------------------------------------------------------------------------------
# 2. the degraded mark
# ---------------------------------------------------------------------------------
_COPIES = r"""
import ctypes, os, shutil, sys, tempfile
src = os.path.join(sys.argv[1], "libcuda.so.1")
d = tempfile.mkdtemp(prefix="ct_copies_")
ptrs = []
for i in range(int(sys.argv[2])):
    p = os.path.join(d, "libcuda.so.1.copy%d" % i)
    shutil.copy(src, p)
    lib = ctypes.CDLL(p)
    ptrs.append(ctypes.cast(lib.cuInit, ctypes.c_void_p).value)
    print("cuInit%d=%d" % (i, ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint)(ptrs[-1])(0)))
print("distinct=%d" % len(set(ptrs)))
shutil.rmtree(d)
"""


@test
def t_shim_degraded_marked():
    """More distinct libcuda copies than a hooked name has wrappers: the
    later cuInit pointers are handed out unwrapped, which the shim reports:
    DEGRADED flag, the note in the context (show and show --json) and a note
    event in the timeline.  Two copies: no wrapper runs out, no mark."""
    script = os.path.join(tempfile.mkdtemp(prefix="ct_it_"), "copies.py")
    with open(script, "w") as f:
        f.write(_COPIES)
    r = preload_run([PY, script, FAKECUDA, "8"], rig_env())
    need(r.rc == 0 and "distinct=8" in r.out, "8 copies loaded", r.out, r.err)
    p = r.proc("python")
    need(p["flags"]["degraded"] is True, "trace not marked degraded", p["flags"])
    need(any("unwrapped" in n for n in p["notes"]), "no note says why", p["notes"])
    need(len(p["notes"]) == 1, "the reason is noted once, not per call", p["notes"])
    ds = events(p, "dlsym")
    need(len(ds) == 8 and ds[0]["args"]["wrapped"] and not ds[-1]["args"]["wrapped"],
         "first copies wrapped, the last not", [e["args"].get("wrapped") for e in ds])
    inits = events(p, "cuInit")
    need(len(inits) == sum(1 for e in ds if e["args"]["wrapped"]) and len(inits) < 8,
         "only calls through wrappers are recorded", len(inits))
    notes = [e for e in p["events"] if e["type"] == "note" and e["target"] != "process snapshot"]
    need(len(notes) == 1 and "unwrapped" in notes[0]["target"], "one note event", notes)
    first_bare = [e for e in ds if not e["args"]["wrapped"]][0]
    need(notes[0]["seq"] > first_bare["seq"], "the note follows the dlsym that caused it")
    s = subprocess.run([CUTRACE, "show", r.dir], capture_output=True, text=True)
    need("DEGRADED" in s.stdout and "unwrapped" in s.stdout, "show prints DEGRADED and the note", s.stdout[:3000])
    cleanup(r)
    r = preload_run([PY, script, FAKECUDA, "2"], rig_env())
    p = r.proc("python")
    need(r.rc == 0 and p["flags"]["degraded"] is False and p["notes"] == [], "2 copies: not degraded", p["flags"],
         p["notes"])
    cleanup(r)
    shutil.rmtree(os.path.dirname(script), ignore_errors=True)


@test
def t_shim_not_degraded_on_the_rig():
    r = cutrace_run([PROBE], rig_env())
    p = r.proc("cutrace-probe")
    need(p["flags"]["degraded"] is False and p["notes"] == [], "a healthy run is not degraded", p["flags"], p["notes"])
    need(not [e for e in p["events"] if e["type"] == "note" and e["target"] != "process snapshot"],
         "no note events but the process snapshot")
    cleanup(r)


# ---------------------------------------------------------------------------------
# 3. no malloc, stdio or locks: pinned through the shim's dynamic imports
# ---------------------------------------------------------------------------------
FORBIDDEN_IMPORTS = {"malloc", "calloc", "realloc", "free", "fopen", "fdopen", "fclose", "fprintf", "printf",
                     "fputs", "puts", "fwrite", "fread", "fflush", "pthread_mutex_lock", "pthread_mutex_unlock",
                     "realpath"}


@test
def t_shim_no_alloc_stdio_lock_imports():
    nm = subprocess.run(["nm", "-D", "--undefined-only", SHIM], capture_output=True, text=True)
    need(nm.returncode == 0 and nm.stdout.strip(), "nm -D --undefined-only works", nm.stderr)
    names = {l.split()[-1].split("@")[0] for l in nm.stdout.splitlines() if l.strip()}
    need("clock_gettime" in names or "syscall" in names, "the import list looks wrong", sorted(names))
    bad = sorted(n for n in names if n in FORBIDDEN_IMPORTS or n.startswith("pthread_rwlock_")
                 or n.startswith(("__fprintf", "__printf", "_IO_")))
    need(not bad, "libcutrace.so imports allocation/stdio/lock functions: %s" % bad)


# ---------------------------------------------------------------------------------
# 4. the reentrancy guard
# ---------------------------------------------------------------------------------
@test
def t_shim_own_lookups_not_recorded():
    """Linked path: the wrappers find the real functions themselves (dlsym
    RTLD_NEXT, dlopen RTLD_NOLOAD of libcuda, dlclose) and create the trace
    file; none of that may show up as the program's own calls."""
    r = preload_run([os.path.join(PROGS, "probe_linked")], rig_env(CUTRACE_DEBUG="2"))
    need(r.rc == 0 and "cuInit=0" in r.out, "probe_linked failed", r.out, r.err)
    p = r.proc("probe_linked")
    calls = {e["call"] for e in p["events"]}
    need(not calls & {"dlopen", "dlmopen", "dlsym", "dlvsym", "dlclose"}, "the shim's own loader calls recorded",
         sorted(calls))
    need(calls >= {"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "ioctl"}, "the program's calls", sorted(calls))
    targets = [e["target"] for e in _opens(p)]
    need(targets and all(t.startswith("/dev/nvidia") for t in targets), "only NVIDIA nodes opened", targets)
    traces = glob.glob(os.path.join(r.dir, "*.cutrace"))
    need(len(traces) == 1, "one trace file", traces)
    need(not any(os.path.basename(traces[0]) in (e["target"] or "") or r.dir in (e["target"] or "")
                 for e in p["events"]), "the trace file's own creation recorded")
    need(all(l.startswith("cutrace[") for l in r.err.splitlines() if l.strip()),
         "CUTRACE_DEBUG output is the shim's own lines only", r.err)
    cleanup(r)


@test
def t_shim_constructor_before_shim():
    """libsnip.so's constructor runs before the preloaded shim's and calls
    open, ioctl, close, dlopen, dlsym and cuInit: every one is in the trace,
    in order, before main's own calls."""
    r = preload_run([os.path.join(PROGS, "prog_ctor")], rig_env())
    need(r.rc == 0 and "snip_SYS_PARAMS=0" in r.out and "snip_cuInit=0" in r.out, "prog_ctor failed", r.out, r.err)
    p = r.proc("prog_ctor")
    # (the process snapshot note comes just before cuInit: it_runtime.py checks it)
    ev = [e for e in p["events"] if e["depth"] == 0 and e["target"] != "process snapshot"]
    want = [("open", "/dev/nvidiactl"), ("ioctl", None), ("close", None), ("dlopen", "libcuda.so.1"),
            ("dlsym", "cuInit"), ("cuInit", None)]
    got = [(e["call"], e["target"]) for e in ev[:len(want)]]
    for (wc, wt), e in zip(want, ev):
        need(e["call"] == wc and (wt is None or e["target"] == wt), "constructor's calls in order", got, want)
        need(e["returned"] and e["ok"], "constructor's %s failed" % wc, e)
    need(ev[1]["name"] == "NV_ESC_SYS_PARAMS" and ev[1]["args"].get("fd") == ev[0]["result"],
         "the constructor's ioctl on the fd it opened", ev[1], ev[0])
    need(ev[4]["args"]["wrapped"], "the constructor's dlsym(cuInit) was wrapped", ev[4])
    need(ev[5]["result"] == 0 and any(e["call"] == "ioctl" and e["depth"] == 1 for e in p["events"]),
         "the constructor's cuInit and its ioctls")
    inits = events(p, "cuInit")
    need(len(inits) == 2 and all(e["result"] == 0 for e in inits), "snip's and main's cuInit", inits)
    cleanup(r)


# ---------------------------------------------------------------------------------
# 5. every hooked entry point, with its arguments and result
# ---------------------------------------------------------------------------------
OPEN_VARIANTS = ["open", "open64", "openat", "openat64", "__open_2", "__open64_2", "__openat_2", "__openat64_2"]


@test
def t_shim_hook_calls():
    r = cutrace_run([os.path.join(PROGS, "hook_calls")], rig_env())
    need(r.rc == 0, "hook_calls failed", r.out, r.err)
    p = r.proc("hook_calls")
    top = [e for e in p["events"] if e["depth"] == 0]
    # the eight opens, in the program's order, each then closed
    opens = [e for e in top if e["call"] in OPEN_VARIANTS]
    need([e["call"] for e in opens[:8]] == OPEN_VARIANTS, "the eight open entry points",
         [e["call"] for e in opens[:8]])
    for e in opens[:8]:
        a = e["args"]
        need(e["target"] == "/dev/nvidiactl" and e["ok"] and e["result"] >= 0, "%s result" % e["call"], e)
        need(a.get("flags") == "O_RDWR|O_CLOEXEC" and a.get("node") == "nvidiactl" and a.get("rdev") == "195:255",
             "%s args" % e["call"], a)
        need(("at" in e["call"]) == (a.get("dirfd") == -100), "%s dirfd (AT_FDCWD)" % e["call"], a)
        need(e["dur_ns"] is not None and e["dur_ns"] < 5e6, "%s duration" % e["call"], e)
    closes = [e for e in top if e["call"] == "close"]
    need(len(closes) >= 8 and all(c["args"]["fd"] == o["result"] and c["ok"] for c, o in zip(closes, opens)),
         "each open's fd closed", [(c["args"], c["result"]) for c in closes[:8]])
    # dlsym'd cuCtxCreate_v2, called
    ds = first(p, "dlsym", target="cuCtxCreate_v2")
    need(ds["ok"] and ds["args"]["wrapped"], "dlsym(cuCtxCreate_v2) wrapped", ds)
    need(first(p, "dlsym", target="cuGetProcAddress_v2")["args"]["wrapped"], "dlsym(cuGetProcAddress_v2) wrapped")
    c2 = first(p, "cuCtxCreate_v2")
    need(c2["result"] == 0 and c2["args"].get("flags") == 0 and c2["args"].get("dev") == 0 and
         c2["args"].get("ctx", "0x0") != "0x0", "cuCtxCreate_v2 args/result", c2)
    need(any(e["call"] == "ioctl" and e["depth"] >= 1 and e["seq"] > c2["seq"] for e in p["events"]),
         "ioctls under cuCtxCreate_v2")
    # cuGetProcAddress_v2 with a status pointer: found -> cuCtxCreate_v3, wrapped and called
    g = first(p, "cuGetProcAddress_v2", target="cuCtxCreate")
    a = g["args"]
    need(g["result"] == 0 and a.get("cuda_version") == 11040 and a.get("wrapped") is True, "gpa(cuCtxCreate)", g)
    need(a.get("symstatus") == 0 and a.get("symstatus_name") == "CU_GET_PROC_ADDRESS_SUCCESS",
         "symbol status recorded", a)
    c3 = first(p, "cuCtxCreate_v3")
    need(c3["result"] == 0 and c3["args"].get("flags") == 4 and c3["args"].get("dev") == 0, "cuCtxCreate_v3", c3)
    g = first(p, "cuGetProcAddress_v2", target="cuNoSuchFunction")
    need(g["result"] == 500 and g["result_name"] == "CUDA_ERROR_NOT_FOUND" and not g["ok"], "gpa of a missing name", g)
    need(g["args"].get("symstatus") == 1 and g["args"].get("wrapped") is False, "missing name: status 1", g["args"])
    # dlmopen into a new namespace
    dm = first(p, "dlmopen", target="libcuda.so.1")
    a = dm["args"]
    need(dm["ok"] and a.get("lmid") == -1 and a.get("flags") == "RTLD_NOW", "dlmopen(LM_ID_NEWLM) args", dm)
    need(a.get("realpath") == os.path.realpath(os.path.join(FAKECUDA, "libcuda.so.1")) and a.get("libkind") == "cuda",
         "dlmopen realpath", a)
    need(a.get("file_size") == os.path.getsize(os.path.join(FAKECUDA, "libcuda.so.1")), "dlmopen file size", a)
    # dlvsym of a CUDA name with a version the fake does not have
    dv = first(p, "dlvsym", target="cuInit")
    a = dv["args"]
    need(a.get("version") == "GLIBC_2.2.5" and not dv["ok"] and a.get("pfn") == "0x0", "dlvsym args/result", dv)
    need("undefined symbol: cuInit, version GLIBC_2.2.5" in a.get("dlerror", ""), "dlvsym's dlerror", a)
    need("dlvsym=null" in r.out, "the program saw the failure", r.out)
    cleanup(r)


def no_trace_without_cuda(prog, work, mark, n):
    """PROG --no-cuda WORK runs (N lines with MARK) and, having never touched
    CUDA, leaves no trace file"""
    r = cutrace_run([prog, "--no-cuda", work], rig_env())
    need(r.rc == 0 and r.out.count(mark) == n, "%s --no-cuda failed" % os.path.basename(prog), r.out, r.err)
    need(not glob.glob(os.path.join(r.dir, "*.cutrace")), "a process that never touched CUDA has no trace",
         os.listdir(r.dir))
    cleanup(r)


@test
def t_shim_fs_calls():
    """Format 1.5: the file-system calls a driver makes on NVIDIA paths before
    it opens a node (stat, __xstat, access, fopen, open of /proc and /sys
    files, mknod, mknodat, chmod, chown, symlink, unlink, remove of a
    /dev/nvidia* name) are in the trace with their arguments, results and
    errno as the program saw them; the same calls on other paths are not; a
    process that never touched CUDA gets no trace for them."""
    work = tempfile.mkdtemp(prefix="ct_fs_")
    prog = os.path.join(PROGS, "fs_calls")
    r = cutrace_run([prog, work], rig_env())
    need(r.rc == 0, "fs_calls failed", r.out, r.err)
    p = r.proc("fs_calls")
    seen = [l.split() for l in r.out.splitlines() if " = " in l]
    need(len(seen) == 30, "fs_calls printed 30 calls", r.out)
    fs = [e for e in p["events"] if e["call"] != "dlopen"]
    for name, path, _, ret, err, *rest in seen:
        mine = [e for e in fs if e["target"] == path and e["call"] == name]
        if "nvidia" not in path and path not in ("/proc/devices", "/proc/modules"):
            need(not mine and not [e for e in p["events"] if e["target"] == path],
                 "%s(%s) is not NVIDIA's: not recorded" % (name, path), mine)
            continue
        need(len(mine) == 1, "%s(%s) recorded once" % (name, path), [(e["call"], e["target"]) for e in fs])
        e = mine[0]
        want_ret = int(ret) if name != "fopen" else (0 if ret == "1" else -1)
        need(e["result"] == want_ret and e["errno"] == int(err.split("=")[1]),
             "%s(%s): result and errno as the program saw them (%s %s)" % (name, path, ret, err), e)
        need(e["ok"] == (want_ret >= 0), "%s(%s) ok" % (name, path), e)
        a = e["args"]
        if name in ("stat", "__xstat") and want_ret == 0:
            need(a.get("mode") == "0" + rest[0].split("=0")[1], "%s: st_mode" % name, a, rest)
        if name in ("mknod", "mknodat"):
            need(a.get("mode") == "010600", "%s: mode S_IFIFO|0600" % name, a)
            need(a.get("rdev") == ("195:254" if name == "mknodat" else "0:0"), "%s: rdev" % name, a)
            need((a.get("dirfd") == -100) == (name == "mknodat"), "%s: dirfd" % name, a)
        if name == "chmod":
            need(a.get("mode") == "0666", "chmod: mode", a)
        if name == "chown":
            need(a.get("uid") == os.getuid() and a.get("gid") == os.getgid(), "chown: uid, gid", a)
        if name == "symlink":
            need(a.get("target", "").startswith("nvidia-cutrace-test-"), "symlink: its target", a)
        if name == "access":
            need(a.get("mode") == 4, "access: R_OK", a)
        if name == "fopen":
            need(a.get("mode") == "r", "fopen: its mode", a)
    need(len(fs) == 15, "15 NVIDIA calls recorded, nothing else", [(e["call"], e["target"]) for e in fs])
    txt = subprocess.run([CUTRACE, "show", "--color=never", r.dir], capture_output=True, text=True).stdout
    need(re.search(r'mknodat\(AT_FDCWD, "/dev/nvidia-cutrace-test2-\d+", S_IFIFO\|0600, 195:254\) = ', txt),
         "show: mknodat's line", txt)
    need('stat("/proc/devices") = 0  (S_IFREG|0444)' in txt, "show: stat's st_mode", txt)
    cleanup(r)
    shutil.rmtree(work, ignore_errors=True)
    # no CUDA in the process: no trace at all
    work = tempfile.mkdtemp(prefix="ct_fs_")
    no_trace_without_cuda(prog, work, " = ", 30)
    shutil.rmtree(work, ignore_errors=True)


@test
def t_shim_helper_processes():
    """Format 1.6: a helper named nvidia-modprobe run by fork + execle/execv/
    execl or posix_spawn is recorded in the parent when it reaps the child:
    path, arguments, the wait status (even when the program passes NULL for
    it), an exec that failed with its errno; other children are not; the
    program sees every pid and status unchanged; a process that never touched
    CUDA gets no trace."""
    work = tempfile.mkdtemp(prefix="ct_helper_")
    helper = os.path.join(work, "nvidia-modprobe")
    with open(helper, "w") as f:
        f.write('#!/bin/sh\ncase "$1" in [0-9]*) exit "$1" ;; esac\nexit 1\n')
    os.chmod(helper, 0o755)
    prog = os.path.join(PROGS, "helper_run")
    r = cutrace_run([prog, work], rig_env())
    need(r.rc == 0, "helper_run failed", r.out, r.err)
    runs = dict((int(m.group(1)), (int(m.group(2)), int(m.group(3))))
                for m in re.finditer(r"RUN (\d) pid=(\d+) status=(-?\d+)", r.out))
    need(sorted(runs) == [1, 2, 3, 4, 5], "five runs", r.out)
    p = r.proc("helper_run")
    ws = [e for e in p["events"] if e["call"] in ("waitpid", "wait4")]
    need(len(ws) == 4, "four helper runs reaped in the trace (not /bin/true)",
         [(e["call"], e["target"], e["args"]) for e in ws])
    want = [  # run, call, path, args, status (None: the program's own), exec errno
        (1, "waitpid", helper, "-c 0 -u", None, 0),
        (2, "waitpid", helper, "0", 0, 0),
        (3, "wait4", os.path.join(work, "missing", "nvidia-modprobe"), "", None, errno.ENOENT),
        (4, "waitpid", helper, "3", None, 0),
    ]
    for e, (n, call, path, args, status, eerr) in zip(ws, want):
        pid, st = runs[n]
        a = e["args"]
        need(e["call"] == call and e["target"] == path and a.get("args") == args and a.get("pid") == pid
             and e["result"] == pid and a.get("exec_errno") == eerr,
             "run %d: %s of %s (%s), pid %d" % (n, call, path, args, pid), e)
        need(a.get("status") == (st if status is None else status), "run %d: the wait status" % n, a, st)
        need(e["ok"] == (n == 2), "run %d: ok only when it exec'd and exited 0" % n, e)
    sp = [e for e in p["events"] if e["call"] == "posix_spawn"]
    need(len(sp) == 1 and sp[0]["target"] == helper and sp[0]["args"].get("args") == "3"
         and sp[0]["result"] == 0 and sp[0]["args"].get("pid") == runs[4][0], "posix_spawn recorded", sp)
    need(runs[1][1] == 1 << 8 and runs[3][1] == 127 << 8 and runs[4][1] == 3 << 8,
         "the program saw the real statuses", runs)
    txt = subprocess.run([CUTRACE, "show", "--no-time", "--color=never", r.dir], capture_output=True,
                         text=True).stdout
    need('waitpid(<pid>: "%s -c 0 -u") = <pid>  (exited 1)' % helper in txt, "show: the helper's line", txt)
    need("(its exec failed: ENOENT" in txt, "show: the failed exec", txt)
    cleanup(r)
    no_trace_without_cuda(prog, work, "RUN ", 5)
    shutil.rmtree(work, ignore_errors=True)


@test
def t_shim_dlopen_from_constructor_of_dlopened_library():
    """A library that a program dlopen()s loads libcuda from its constructor,
    while its own dlopen is still running (libcublasLt does this under
    torch): the shim finds that caller's link map (_dl_find_object, while
    the object is being initialised) and records the dlopen, with the file
    the caller's search found."""
    code = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"
    r = preload_run([PY, "-c", code, os.path.join(PROGS, "libsnip.so")], rig_env())
    need(r.rc == 0 and "snip_cuInit=0" in r.out, "the snippet's constructor failed", r.out, r.err)
    p = [q for q in r.procs if events(q, "cuInit")]
    need(len(p) == 1, "one traced process ran cuInit", [q.get("comm") for q in r.procs])
    dl = first(p[0], "dlopen", target="libcuda.so.1")
    need(dl["ok"] and dl["args"].get("realpath") == os.path.realpath(os.path.join(FAKECUDA, "libcuda.so.1")),
         "the constructor's dlopen of libcuda, recorded with its real path", dl)
    cleanup(r)


@test
def t_shim_dlopen_realpath_resolves_links():
    """The dlopen exit record's real path follows symlinks (readlink of an
    O_PATH fd in /proc): libcuda.so.1 reached through a link farm."""
    d = tempfile.mkdtemp(prefix="ct_it_links_")
    os.symlink(os.path.join(FAKECUDA, "libcuda.so.1"), os.path.join(d, "libcuda.so.1"))
    r = cutrace_run([PROBE], base_env(LD_LIBRARY_PATH=d, LD_PRELOAD=FAKENV))
    need(r.rc == 0, "probe through the link failed", r.out, r.err)
    dl = first(r.proc("cutrace-probe"), "dlopen", target="libcuda.so.1")
    need(dl["args"].get("realpath") == os.path.realpath(os.path.join(d, "libcuda.so.1")),
         "realpath should be the link's target", dl["args"])
    cleanup(r)
    shutil.rmtree(d, ignore_errors=True)


def _rt_lines(out):
    got = {}
    for line in out.splitlines():
        k, _, rest = line.partition("=")
        if rest:
            got[k] = rest.split()
    return got


@test
def t_shim_cudart_calls():
    """The real shared libcudart (rt_shared): cudaRuntimeGetVersion,
    cudaDriverGetVersion, cudaSetDevice, cudaFree and cudaMalloc are each in
    the trace with their arguments and the result the program saw; on the
    rig (500: the fake cannot pass cudart's checks) and without a driver (35)."""
    for env, code in ((rig_env(), 500), (base_env(), 35)):
        r = cutrace_run([os.path.join(PROGS, "rt_shared")], env)
        out = _rt_lines(r.out)
        p = r.proc("rt_shared")
        for call in ("cudaRuntimeGetVersion", "cudaDriverGetVersion", "cudaSetDevice", "cudaFree", "cudaMalloc"):
            es = events(p, call)
            need(len(es) == 1 and es[0]["returned"] and es[0]["depth"] == 0, "%s recorded once" % call, es)
            need(es[0]["result"] == int(out[call][0]), "%s result %r, program saw %r" % (call, es[0]["result"],
                                                                                        out[call][0]))
        rv = first(p, "cudaRuntimeGetVersion")
        need(rv["result"] == 0 and rv["args"].get("version") == int(out["cudaRuntimeGetVersion"][1].split("=")[1]),
             "cudaRuntimeGetVersion's version", rv)
        dv = first(p, "cudaDriverGetVersion")
        want = int(out["cudaDriverGetVersion"][1].split("=")[1])
        need(dv["result"] == 0 and dv["args"].get("version", 0) == want, "cudaDriverGetVersion's version", dv, want)
        need(first(p, "cudaSetDevice")["args"].get("device") == 0, "cudaSetDevice(0)")
        need(first(p, "cudaMalloc")["args"].get("size") == 1 << 20, "cudaMalloc(1 MiB)")
        need(first(p, "cudaFree")["args"].get("ptr") == 0, "cudaFree(0)")
        for call in ("cudaSetDevice", "cudaFree", "cudaMalloc"):
            e = first(p, call)
            need(e["result"] == code and not e["ok"], "%s = %d here" % (call, code), e)
        cleanup(r)


# ---------------------------------------------------------------------------------
# 6. the real H200 traces
# ---------------------------------------------------------------------------------
def _fixture(name):
    path = os.path.join(FIXTURES, name + ".cutrace.gz")
    need(os.path.exists(path), "fixture missing: " + path)
    d = tempfile.mkdtemp(prefix="ct_it_fx_")
    out = os.path.join(d, name + ".cutrace")
    with gzip.open(path, "rb") as f, open(out, "wb") as g:
        shutil.copyfileobj(f, g)
    s = subprocess.run([CUTRACE, "show", "--json", out], capture_output=True, text=True)
    shutil.rmtree(d, ignore_errors=True)
    need(s.returncode == 0, "show --json of %s: rc %d" % (name, s.returncode), s.stderr)
    ps = json.loads(s.stdout)["processes"]
    need(len(ps) == 1, "one process in %s" % name)
    return ps[0]


REAL_LIBCUDA = "/usr/local/nvidia/lib64/libcuda.so.580.159.04"


@test
def t_shim_fixture_torch():
    p = _fixture("torch")
    need("import torch" in " ".join(p["cmdline"]), "the torch command", p["cmdline"])
    need(p["stats"]["torn"] == 0 and p["stats"]["lost"] == 0 and not p["flags"]["degraded"], "a clean trace",
         p["stats"])
    dl = [e for e in events(p, "dlopen") if e["target"] == "libcuda.so.1"]
    need(dl and all(e["ok"] and e["args"].get("realpath") == REAL_LIBCUDA for e in dl),
         "dlopen(libcuda.so.1) -> " + REAL_LIBCUDA, [e["args"] for e in dl])
    g = first(p, "cuGetProcAddress_v2", target="cuInit")
    need(g["result"] == 0 and g["args"].get("wrapped") is True, "cuGetProcAddress_v2(cuInit) wrapped", g)
    gg = [e for e in events(p, "cuGetProcAddress_v2") if e["target"] == "cuGetProcAddress"]
    need(gg and all(e["args"].get("wrapped") for e in gg), "cudart's cuGetProcAddress pointer wrapped", gg)
    need(len(events(p, "cuGetProcAddress_v2")) > 100, "the look-ups through the wrapped pointer")
    ci = events(p, "cuInit")
    need(len(ci) == 1 and ci[0]["returned"] and ci[0]["result"] == 0 and ci[0]["seq"] > g["seq"],
         "cuInit returned 0 after cudart looked it up", ci)
    opens = {e["target"] for e in p["events"] if e["call"].startswith("open") and e["ok"]}
    for node in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"):
        need(node in opens, "no open of " + node, sorted(opens))
    io = events(p, "ioctl")
    nodes = {}
    for e in io:
        nodes[e.get("node")] = nodes.get(e.get("node"), 0) + 1
    need(len(io) >= 300, "several hundred NVIDIA ioctls, got %d" % len(io))
    need(all(nodes.get(n, 0) >= 10 for n in ("nvidiactl", "nvidia0", "nvidia-uvm")), "ioctls on each node", nodes)
    need(sum(1 for e in io if e["ok"]) >= len(io) * 0.95, "the ioctls of a healthy run succeed")
    need(any(e.get("name") == "UVM_REGISTER_GPU" and e["ok"] for e in io), "UVM_REGISTER_GPU")
    need(first(p, "cudaMalloc")["result"] == 0, "torch.zeros allocated")
    need(verdict(p)["ok"], "verdict ok", verdict(p))


@test
def t_shim_fixture_probe():
    p = _fixture("probe")
    dl = first(p, "dlopen", target="libcuda.so.1")
    need(dl["ok"] and dl["args"].get("realpath") == REAL_LIBCUDA and dl["depth"] == 0, "probe's dlopen", dl)
    ds = first(p, "dlsym", target="cuInit")
    need(ds["ok"] and ds["args"].get("wrapped") is True and ds["args"]["handle"] == dl["args"]["handle"],
         "dlsym(handle, cuInit) wrapped", ds)
    need(not events(p, "cuGetProcAddress_v2") and not events(p, "cuGetProcAddress"), "the dlsym path only")
    ci = first(p, "cuInit")
    need(ci["returned"] and ci["result"] == 0 and ci["seq"] > ds["seq"], "cuInit 0 through the dlsym pointer", ci)
    opens = {e["target"] for e in p["events"] if e["call"].startswith("open") and e["ok"] and e["depth"] >= 1}
    need({"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"} <= opens, "the nodes opened inside cuInit", opens)
    need(len([e for e in events(p, "ioctl") if e["depth"] >= 1]) > 20, "ioctls inside cuInit")
    need(first(p, "cuDeviceGetCount")["result"] == 0, "cuDeviceGetCount")
    need(verdict(p)["ok"], "verdict ok", verdict(p))
