#!/usr/bin/env python3
"""Integration tests: real programs under libcutrace.so on the GPU-less rig.

Every test runs programs through `cutrace run` (or LD_PRELOAD directly) with
the fake NVIDIA kernel (libfakenv.so, preloaded after the shim) and the fake
or the toolkit's real CUDA libraries, then reads the traces back with
`cutrace show --json` and checks what the trace and the verdict say.

usage: itest.py --list | itest.py TEST...
Paths come from the environment (set by tests/integration/tests.cmake):
CUTRACE CUTRACE_SHIM FAKENV FAKECUDA_DIR STUBCUDA_DIR PROG_DIR PROBE CUDA_LIB_DIR
PYTHON3 CTYPES_PROBE WHEN_THREADS
"""
import json
import re
import os
import shutil
import signal
import subprocess
import sys
import tempfile

E = os.environ
CUTRACE = E.get("CUTRACE", "")
SHIM = E.get("CUTRACE_SHIM", "")
FAKENV = E.get("FAKENV", "")
FAKECUDA = E.get("FAKECUDA_DIR", "")
STUB = E.get("STUBCUDA_DIR", "")
PROGS = E.get("PROG_DIR", "")
PROBE = E.get("PROBE", "")
PY = E.get("PYTHON3", sys.executable)

TESTS = {}


def test(fn):
    TESTS[fn.__name__[2:]] = fn
    return fn


class Fail(Exception):
    pass


def need(cond, msg, *ctx):
    if not cond:
        raise Fail(msg + ("" if not ctx else "\n" + "\n".join(str(c)[:3000] for c in ctx)))


def base_env(**extra):
    """A clean environment: no LD_PRELOAD/LD_LIBRARY_PATH/CUDA_VISIBLE_DEVICES/FAKE* leaks."""
    env = {k: v for k, v in E.items()
           if not k.startswith(("FAKENV_", "FAKECUDA_", "FAKENVML_", "CUTRACE_"))
           and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def rig_env(**extra):
    return base_env(LD_LIBRARY_PATH=FAKECUDA, LD_PRELOAD=FAKENV, **extra)


class Run:
    def __init__(self, rc, out, err, d):
        self.rc, self.out, self.err, self.dir = rc, out, err, d
        self._doc = None

    @property
    def doc(self):
        if self._doc is None:
            p = subprocess.run([CUTRACE, "show", "--json", self.dir], capture_output=True, text=True)
            need(p.returncode in (0, 1), "show --json failed rc=%d" % p.returncode, p.stderr)
            self._doc = json.loads(p.stdout)
        return self._doc

    @property
    def procs(self):
        return self.doc["processes"]

    def proc(self, exe_part=None):
        ps = [p for p in self.procs if exe_part is None or exe_part in (p.get("exe") or "")]
        need(len(ps) >= 1, "no traced process matching %r" % exe_part, self.err, [p.get("exe") for p in self.procs])
        return ps[0]


def cutrace_run(argv, env, inject=(), scenario=None, timeout=60, extra=()):
    d = tempfile.mkdtemp(prefix="ct_it_")
    cmd = [CUTRACE, "run", "-o", d] + [a for r in inject for a in ("--inject", r)]
    if scenario:
        cmd += ["--scenario", scenario]
    cmd += list(extra) + ["--"] + list(argv)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return Run(p.returncode, p.stdout, p.stderr, d)


def preload_run(argv, env, timeout=60):
    d = tempfile.mkdtemp(prefix="ct_it_")
    env = dict(env)
    env["LD_PRELOAD"] = SHIM + ((":" + env["LD_PRELOAD"]) if env.get("LD_PRELOAD") else "")
    env["CUTRACE_DIR"] = d
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    return Run(p.returncode, p.stdout, p.stderr, d)


def events(p, call=None):
    return [e for e in p["events"] if call is None or e["call"] == call]


def first(p, call, **match):
    for e in events(p, call):
        if all(e.get(k) == v or (k == "target_has" and v in e["target"]) for k, v in match.items()):
            return e
    raise Fail("no %s event matching %r in %s" % (call, match, [(e["call"], e["target"]) for e in p["events"]][:80]))


def verdict(p):
    return p["verdict"]


def expect_verdict(p, layer, step_call=None, final=None, summary_has=None, injected=None):
    v = verdict(p)
    need(v["layer"] == layer, "verdict layer %r, want %r" % (v["layer"], layer), v)
    if step_call is not None:
        sc = v["step"]["call"] if v["step"] else None
        ok = sc == step_call or (step_call == "open" and sc and "open" in sc)
        need(ok, "verdict step %r, want %r" % (sc, step_call), v)
    if final is not None:
        need(v["final"] and v["final"]["code"] == final, "final code %r, want %r" % (v["final"], final), v)
    if summary_has:
        need(summary_has in v["summary"], "summary lacks %r" % summary_has, v["summary"])
    if injected is not None:
        need(v["injected"] == injected, "injected %r, want %r" % (v["injected"], injected), v)
    return v


def cleanup(r):
    shutil.rmtree(r.dir, ignore_errors=True)


# ---------------------------------------------------------------------------------
# Issue: every path a program takes to the driver
# ---------------------------------------------------------------------------------
def check_init_chain(p):
    ci = first(p, "cuInit")
    need(ci["returned"] and ci["result"] == 0 and ci["depth"] == 0, "cuInit not ok", ci)
    opens = {e["target"] for e in p["events"] if e["call"].startswith("open")}
    for node in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"):
        need(node in opens, "no open of %s" % node, opens)
    names = [e.get("name", "") for e in events(p, "ioctl")]
    need(any(n.startswith("NV_ESC_CARD_INFO") for n in names), "no CARD_INFO", names)
    need(any("NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION" in n for n in names), "no build-version handshake", names)
    need(any(n == "UVM_REGISTER_GPU" for n in names), "no UVM_REGISTER_GPU", names)
    need(not any(n.startswith("_IOC") or n.startswith("UVM cmd") for n in names), "undecoded ioctls", names)
    need(all(e["depth"] >= 1 for e in events(p, "ioctl") if e["t_ns"] < ci["t_ns"] + ci["dur_ns"]),
         "ioctls inside cuInit are not nested under it")
    expect_verdict(p, "none")


@test
def t_path_linked():
    r = cutrace_run([os.path.join(PROGS, "probe_linked")], rig_env())
    need(r.rc == 0 and "cuInit=0" in r.out, "probe_linked failed", r.out, r.err)
    p = r.proc("probe_linked")
    check_init_chain(p)
    need(not events(p, "dlsym"), "linked program should need no dlsym")
    cleanup(r)


@test
def t_path_dlopen():
    r = cutrace_run([PROBE], rig_env())
    need(r.rc == 0 and "cuInit(0) = 0" in r.out, "probe failed", r.out, r.err)
    p = r.proc("cutrace-probe")
    dl = first(p, "dlopen", target="libcuda.so.1")
    need(dl["ok"] and FAKECUDA in dl["args"].get("realpath", ""), "dlopen realpath", dl)
    ds = first(p, "dlsym", target_has="cuInit")
    need(ds["args"].get("wrapped") is True, "dlsym(cuInit) not wrapped", ds)
    check_init_chain(p)
    cleanup(r)


@test
def t_path_ctypes():
    r = cutrace_run([PY, E["CTYPES_PROBE"]], rig_env())
    need(r.rc == 0 and "cuInit=0" in r.out, "ctypes probe failed", r.out, r.err)
    check_init_chain(r.proc("python"))
    cleanup(r)


def check_cudart_chain(p, shared):
    gpa = events(p, "cuGetProcAddress_v2")
    syms = [e["target"] for e in gpa]
    need("cuGetProcAddress" in syms and "cuInit" in syms, "cudart's cuGetProcAddress_v2 look-ups", syms[:20])
    wrapped = [e for e in gpa if e["target"] == "cuGetProcAddress" and e["args"].get("wrapped")]
    need(wrapped, "cuGetProcAddress returned unwrapped", [e["args"] for e in gpa[:5]])
    # everything after goes through the returned pointer: those look-ups must be seen too
    later = events(p, "cuGetProcAddress") + [e for e in gpa if e["seq"] > wrapped[0]["seq"]]
    need(len(later) > 20, "few look-ups seen after cuGetProcAddress was wrapped (%d)" % len(later))
    ci = first(p, "cuInit")
    need(ci["returned"] and ci["result"] == 0, "cuInit through the cudart chain", ci)
    if shared:
        need(events(p, "cudaGetDeviceCount"), "cudaGetDeviceCount not recorded (shared cudart)")


@test
def t_path_cudart_shared():
    r = cutrace_run([os.path.join(PROGS, "rt_shared")], rig_env())
    check_cudart_chain(r.proc("rt_shared"), True)
    cleanup(r)


@test
def t_path_cudart_static():
    r = cutrace_run([os.path.join(PROGS, "rt_static")], rig_env())
    p = r.proc("rt_static")
    check_cudart_chain(p, False)
    need(not events(p, "cudaGetDeviceCount"), "static cudart's own calls cannot be interposed")
    cleanup(r)


@test
def t_real_cudart_no_libcuda():
    r = cutrace_run([os.path.join(PROGS, "rt_shared")], base_env())
    need("cudaGetDeviceCount=35" in r.out, "real cudart without libcuda should say 35", r.out)
    p = r.proc("rt_shared")
    dl = first(p, "dlopen", target="libcuda.so.1")
    need(not dl["ok"] and "cannot open shared object file" in dl["args"].get("dlerror", ""), "dlopen failure", dl)
    need(first(p, "cudaGetDeviceCount")["result"] == 35, "cudaGetDeviceCount 35 in the trace")
    v = expect_verdict(p, "loader", "dlopen", 35, "could not be loaded", injected=False)
    need("missing, not too old" in (v["hint"] or ""), "35 hint", v)
    cleanup(r)


@test
def t_real_cudart_stub():
    r = cutrace_run([os.path.join(PROGS, "rt_shared")], base_env(LD_LIBRARY_PATH=STUB))
    need("cudaGetDeviceCount=34" in r.out, "stub should give 34", r.out)
    p = r.proc("rt_shared")
    dl = first(p, "dlopen", target="libcuda.so.1")
    need("/stubs/" in dl["args"].get("realpath", ""), "stub realpath", dl)
    expect_verdict(p, "loader", None, 34, "stub")
    cleanup(r)


@test
def t_real_cudart_with_fake_driver():
    """Real cudart + fake libcuda: the chain and cuInit are visible (the fake
    cannot pass cudart's private export-table checks, hence 500)."""
    r = cutrace_run([os.path.join(PROGS, "rt_shared")], rig_env())
    need("cudaGetDeviceCount=500" in r.out, "expected the rig's 500", r.out)
    check_cudart_chain(r.proc("rt_shared"), True)
    cleanup(r)


@test
def t_never_returned():
    env = rig_env(FAKENV_HANG_CMD="37", FAKENV_HANG_SEC="30")
    r = cutrace_run(["timeout", "-s", "KILL", "2", PROBE], env, timeout=60)
    need(r.rc == 137, "timeout should kill the probe (status 137), got %d" % r.rc, r.out, r.err)
    p = r.proc("cutrace-probe")
    ci = first(p, "cuInit")
    need(not ci["returned"], "cuInit should be open", ci)
    hung = [e for e in events(p, "ioctl") if not e["returned"]]
    need(hung and hung[0]["name"] == "UVM_REGISTER_GPU", "the hanging ioctl", hung)
    need(p["flags"]["exited"] is False, "killed process marked exited")
    v = expect_verdict(p, "uvm", "ioctl")
    need(v["hung"] and "never returned" in v["summary"], "hung verdict", v)
    need("FAILED [uvm]" in r.err, "run prints the verdict", r.err)
    cleanup(r)


@test
def t_fork_exec():
    r = cutrace_run([os.path.join(PROGS, "fork_probe"), "--exec", PROBE], rig_env())
    need(r.rc == 0, "fork_probe failed", r.out, r.err)
    pids = {(p["pid"], p["start_realtime_ns"]) for p in r.procs}
    need(len(r.procs) >= 3, "want parent, child and exec'd child traces, got %d" % len(r.procs),
         [(p["pid"], p["exe"]) for p in r.procs])
    need(len(pids) == len(r.procs), "two processes share a trace")
    child = [p for p in r.procs if p["flags"]["forked"]]
    need(child, "no trace marked as a fork child")
    need(all(p["ppid"] != p["pid"] for p in r.procs), "pid/ppid")
    execd = [p for p in r.procs if (p["exe"] or "").endswith("cutrace-probe")]
    need(execd and first(execd[0], "cuInit")["result"] == 0, "exec'd probe traced")
    cleanup(r)


@test
def t_constructor_order():
    r = cutrace_run([os.path.join(PROGS, "prog_ctor")], rig_env())
    need(r.rc == 0 and "snip_cuInit=0" in r.out, "prog_ctor failed", r.out, r.err)
    p = r.proc("prog_ctor")
    first_open = [e for e in p["events"] if e["call"].startswith("open")][0]
    need(first_open["target"] == "/dev/nvidiactl" and first_open["ok"], "constructor's open recorded", first_open)
    need(first(p, "cuInit")["result"] == 0, "constructor's cuInit")
    cleanup(r)


def held_probe(d):
    """The probe under the shim (tracing into d), held by the fake kernel in
    UVM_REGISTER_GPU for 30 s: a live traced process to look at or kill."""
    env = dict(rig_env(FAKENV_HANG_CMD="37", FAKENV_HANG_SEC="30"), LD_PRELOAD=SHIM + ":" + FAKENV, CUTRACE_DIR=d)
    return subprocess.Popen([PROBE], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@test
def t_trace_survives_sigkill():
    """The file is in the page cache as records are written: SIGKILL loses nothing committed."""
    d = tempfile.mkdtemp(prefix="ct_it_")
    pr = held_probe(d)
    import time
    time.sleep(1.0)
    pr.send_signal(signal.SIGKILL)
    pr.wait()
    r = Run(-9, "", "", d)
    p = r.proc("cutrace-probe")
    need(len(events(p, "ioctl")) > 10, "ioctls before the kill")
    need(p["stats"]["torn"] == 0 and p["stats"]["malformed"] == 0, "no torn record expected", p["stats"])
    cleanup(r)


@test
def t_trace_mapping_no_readahead():
    """The trace file is mapped MADV_RANDOM: without it the first touch of the
    fresh file faulted in a whole readahead window of zero pages (3-7 ms per
    traced process on the H200 machine, tests/fixtures/h200-580/README.md)."""
    import time
    d = tempfile.mkdtemp(prefix="ct_it_")
    pr = held_probe(d)
    try:
        flags = None
        for _ in range(100):  # the probe is held in an ioctl once the trace exists
            time.sleep(0.05)
            try:
                smaps = open("/proc/%d/smaps" % pr.pid).read()
            except OSError:
                break
            blocks = re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", smaps)
            mine = [b for b in blocks if b.split("\n", 1)[0].rstrip().endswith(".cutrace")]
            if mine:
                flags = re.search(r"^VmFlags:(.*)$", mine[0], re.M)
                break
        need(flags is not None, "the trace mapping in /proc/PID/smaps")
        need("rr" in flags.group(1).split(), "trace mapping is MADV_RANDOM (rr)", flags.group(1))
    finally:
        pr.kill()
        pr.wait()
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------------
# Issue: the verdict of every failure class (natural faults of the rig)
# ---------------------------------------------------------------------------------
VERDICTS = [
    # name, program, env, layer, step call, final code, summary fragment
    ("ctl_missing", "probe", {"FAKENV_MISSING": "/dev/nvidiactl"}, "device-node", "open", 100, "does not exist"),
    ("ctl_denied", "probe", {"FAKENV_DENY": "/dev/nvidiactl=EPERM"}, "device-node", "open", 100, "device cgroup"),
    ("ctl_eacces", "probe", {"FAKENV_DENY": "/dev/nvidiactl=EACCES"}, "device-node", "open", 100, "permission denied"),
    ("gpu_denied", "probe", {"FAKENV_DENY": "/dev/nvidia0=EPERM"}, "device-node", "open", 100, "/dev/nvidia0"),
    ("gpu_eio", "probe", {"FAKENV_GPU_OPEN_ERRNO": "EIO"}, "device-node", "open", None, "failed to initialize"),
    ("gpu_deferred_eio", "probe", {"FAKENV_GPU_OPEN_ERRNO": "EIO", "FAKECUDA_NONBLOCK": "1"}, "device-node", "ioctl",
     100, "open failed: rc -5 (EIO)"),
    ("gpu_enodev", "probe", {"FAKENV_GPU_OPEN_ERRNO": "ENODEV"}, "device-node", "open", 100, "the GPU is lost"),
    ("gpu_lost_rm", "probe", {"FAKENV_RM_ALLOC_STATUS": "0x80=0xf"}, "resource-manager", "ioctl", None,
     "NV_ERR_GPU_IS_LOST: the GPU is lost"),
    # issue 19 group 4, catalog G6: a vGPU guest (RM says VGX) refuses the channel group, compute mode Default
    ("vgpu_unlicensed", "probe --ctx", {"FAKENV_VIRT_MODE": "2", "FAKENV_RM_ALLOC_STATUS": "0xa06c=0x17"},
     "resource-manager", "ioctl", 46, "on an NVIDIA vGPU guest (the resource manager reports virtualization mode "
     "VGX) whose compute mode is Default; RM refused"),
    ("cc_not_ready", "probe --ctx", {"FAKENV_RM_ALLOC_STATUS": "0xc86f=0x55"}, "resource-manager", "ioctl", 999,
     "confidential computing"),
    ("uvm_missing", "probe", {"FAKENV_MISSING": "/dev/nvidia-uvm"}, "device-node", "open", 999, "nvidia-uvm"),
    ("uvm_denied", "probe", {"FAKENV_DENY": "/dev/nvidia-uvm=EPERM"}, "device-node", "open", 999, "nvidia-uvm"),
    ("version_skew", "probe", {"FAKENV_KERNEL_VERSION": "590.48.01"}, "kernel-handshake", "ioctl", 803, "590.48.01"),
    ("version_older_branch", "probe", {"FAKENV_KERNEL_VERSION": "575.51.02"}, "kernel-handshake", "ioctl", 101,
     "575.51.02"),
    ("no_gpu", "probe", {"FAKENV_GPUS": "0"}, "resource-manager", "ioctl", 100, "lists no GPU"),
    ("uvm_init", "probe", {"FAKENV_UVM_ERRNO": "0x30000001=EPERM"}, "uvm", "ioctl", 999, "UVM_INITIALIZE"),
    ("uvm_register", "probe", {"FAKENV_UVM_STATUS": "37=0x1a"}, "uvm", "ioctl", 3, "UVM_REGISTER_GPU"),
    ("rm_status", "probe", {"FAKENV_RM_CONTROL_STATUS": "0x101=0x1b"}, "resource-manager", "ioctl", 100,
     "NV_ERR_INSUFFICIENT_PERMISSIONS"),
    ("card_info_eio", "probe", {"FAKENV_ESC_ERRNO": "200=EIO"}, "resource-manager", "ioctl", None, "CARD_INFO"),
    ("cvd_empty", "probe", {"CUDA_VISIBLE_DEVICES": ""}, "driver-api", "cuInit", 100, "CUDA_VISIBLE_DEVICES"),
    ("cvd_missing_index", "probe", {"CUDA_VISIBLE_DEVICES": "7"}, "driver-api", "cuInit", 100, "CUDA_VISIBLE_DEVICES"),
    # issue 19 group 5: which entry ended the list, and why (tracer/diag/selectors.h)
    ("cvd_range_named", "probe", {"CUDA_VISIBLE_DEVICES": "7"}, "driver-api", "cuInit", 100,
     "entry 0 '7' is out of range, so the list is empty (the driver sees 1 GPU(s): indices 0..0)"),
    ("cvd_word_first", "probe", {"CUDA_VISIBLE_DEVICES": "first,0"}, "driver-api", "cuInit", 100,
     "entry 0 'first' is neither a GPU index nor a GPU-/MIG- UUID"),
    ("cvd_uuid_none", "probe", {"CUDA_VISIBLE_DEVICES": "GPU-ffff"}, "driver-api", "cuInit", 100,
     "entry 0 'GPU-ffff' matches no GPU's UUID"),
    # the UUIDs RM answered libcuda (GPU_GET_UUID_FROM_GPU_ID / GID_INFO in the trace) check GPU- entries
    ("cvd_uuid_listed", "probe", {"CUDA_VISIBLE_DEVICES": "GPU-ffff", "FAKENV_GPUS": "2"}, "driver-api", "cuInit",
     100, "entry 0 'GPU-ffff' matches no GPU's UUID, so the list is empty (the driver's GPU(s): "
     "GPU-5a1ec0de-0fa7-4e11-9c2d-63705841b200, GPU-5a1ec0de-0fa7-4e11-9c2d-63705841b201)"),
    ("cvd_uuid_ambiguous", "probe", {"CUDA_VISIBLE_DEVICES": "gpu-5A1EC0DE", "FAKENV_GPUS": "2"}, "driver-api",
     "cuInit", 100, "entry 0 'gpu-5A1EC0DE' is a UUID prefix that matches more than one GPU, so the list is empty"),
    ("cvd_uuid_after_index", "probe_linked --dev 1", {"CUDA_VISIBLE_DEVICES": "0,GPU-ffff", "FAKENV_GPUS": "2"},
     "driver-api", "cuDeviceGet", 101, "entry 1 'GPU-ffff' matches no GPU's UUID and ends the list there"),
    ("cvd_mig_none", "probe", {"CUDA_VISIBLE_DEVICES": "MIG-4f2a"}, "driver-api", "cuInit", 100,
     "is a MIG device, and no MIG device with that UUID is visible"),
    ("cvd_cut_short", "probe_linked --dev 1", {"CUDA_VISIBLE_DEVICES": "0,-1,1", "FAKENV_GPUS": "2"}, "driver-api",
     "cuDeviceGet", 101, "entry 1 '-1' is negative and ends the list there"),
    ("fabric", "probe", {"FAKENV_FABRIC": "not-ready"}, None, None, 802, None),
    ("compat_unsupported", "probe", {"FAKECUDA_COMPAT": "1"}, "driver-api", "cuInit", 804, "forward compatibility"),
    ("invalid_ordinal", "probe_linked --dev 5", {}, "driver-api", "cuDeviceGet", 101, "does not exist"),
    ("devices_unavailable", "probe --ctx", {"FAKENV_RM_ALLOC_STATUS": "0xa06c=0x17"}, "resource-manager", "ioctl",
     46, "IN_USE"),
    ("runtime_too_new", "rt_shared", {"FAKECUDA_DRIVER_VERSION": "12040"}, "runtime", "cuDriverGetVersion", 35,
     "needs a newer driver"),
    ("nvml_mismatch", "probe --nvml", {"FAKENVML_VERSION": "575.51.02"}, "kernel-handshake", "ioctl", 18,
     "CHECK_VERSION_STR"),
]


def prog_argv(spec):
    parts = spec.split()
    name = parts[0]
    path = PROBE if name == "probe" else os.path.join(PROGS, name)
    return [path] + parts[1:]


def make_verdict_test(name, prog, env, layer, step, final, frag):
    def t():
        r = cutrace_run(prog_argv(prog), rig_env(**env))
        p = r.proc()
        if layer is None:
            need(verdict(p)["final"]["code"] == final, "final code", verdict(p))
        else:
            expect_verdict(p, layer, step, final, frag, injected=False)
        need(("FAILED [%s]" % (layer or verdict(p)["layer"])) in r.err, "cutrace run prints the verdict", r.err)
        if verdict(p)["final"] and verdict(p)["final"]["code"] == 999:
            need("misleading" in (verdict(p)["hint"] or ""), "torch hint for 999", verdict(p))
        cleanup(r)
    t.__name__ = "t_verdict_" + name
    return t


for _v in VERDICTS:
    TESTS["verdict_" + _v[0]] = make_verdict_test(*_v)


@test
def t_verdict_vgpu_fix_and_others():
    # catalog G6: the license check is the fix; an exclusive-process vGPU and a bare-metal
    # GPU that is busy are not called unlicensed
    r = cutrace_run(prog_argv("probe --ctx"), rig_env(FAKENV_VIRT_MODE="2", FAKENV_RM_ALLOC_STATUS="0xa06c=0x17"))
    v = verdict(r.proc())
    need("nvidia-smi -q | grep -i -A1 'License Status'" in v["fix"] and "/etc/nvidia/gridd.conf" in v["fix"]
         and "nvidia-gridd" in v["fix"], "license fix", v)
    cleanup(r)
    for env in ({"FAKENV_VIRT_MODE": "2", "FAKENV_COMPUTE_MODE": "3", "FAKENV_RM_ALLOC_STATUS": "0xa06c=0x17"},
                {"FAKENV_RM_ALLOC_STATUS": "0xa06c=0x17"}):
        r = cutrace_run(prog_argv("probe --ctx"), rig_env(**env))
        v = verdict(r.proc())
        need(v["final"]["code"] == 46 and "vGPU" not in v["summary"] and "license" not in v["fix"],
             "not the vGPU verdict with %r" % env, v)
        cleanup(r)
    # the scenario: its own words, and show names RM's (rewritten) answer
    r = cutrace_run(prog_argv("probe --ctx"), rig_env(), scenario="vgpu-unlicensed")
    v = verdict(r.proc())
    need("vGPU guest" in v["summary"] and v["injected"], "scenario verdict", v)
    p = subprocess.run([CUTRACE, "show", r.dir], capture_output=True, text=True)
    need("GET_VIRTUALIZATION_MODE) = 0  -> mode VGX (vGPU guest)" in p.stdout, "show names the answer", p.stdout)
    cleanup(r)


@test
def t_run_kernel_log_note():
    # a GPU that failed to start for real (not injected): run reads the kernel
    # log where it can and says what it found (tracer/diag/kmsg.h); injected: not
    r = cutrace_run([PROBE], rig_env(FAKENV_GPU_OPEN_ERRNO="EIO"))
    need("cutrace: kernel log" in r.err or "kernel log is not readable" in r.err, "kernel log note", r.err)
    cleanup(r)
    r = cutrace_run([PROBE], rig_env(), scenario="gpu-init-failed")
    need("cutrace: kernel log" not in r.err and "kernel log is not readable" not in r.err,
         "no kernel log note for an injected failure", r.err)
    cleanup(r)


@test
def t_verdict_healthy_exit_codes():
    r = cutrace_run([PROBE], rig_env())
    need(r.rc == 0 and "OK" in r.err, "healthy probe", r.err)
    p = subprocess.run([CUTRACE, "show", r.dir], capture_output=True, text=True)
    need(p.returncode == 0, "show of a healthy trace exits 0")
    r2 = cutrace_run([PROBE], rig_env(FAKENV_MISSING="/dev/nvidiactl"))
    need(r2.rc == 1, "run exits with the program's status (probe: 1)", r2.rc)
    p = subprocess.run([CUTRACE, "show", r2.dir], capture_output=True, text=True)
    need(p.returncode == 1, "show exits 1 when a process failed", p.returncode)
    cleanup(r)
    cleanup(r2)


@test
def t_run_exit_status_and_signals():
    r = cutrace_run(["sh", "-c", "exit 7"], base_env())
    need(r.rc == 7, "exit status passed through", r.rc)
    r = cutrace_run(["sh", "-c", "kill -TERM $$"], base_env())
    need(r.rc == 128 + 15, "128+N for a signal", r.rc)
    r = cutrace_run(["/nonexistent/prog"], base_env())
    need(r.rc == 127 and "cannot run" in r.err, "missing program", r.rc, r.err)
    # arguments pass literally, without a shell
    r = cutrace_run(["printf", "%s|", "a;b", "$HOME", "*"], base_env())
    need(r.out == "a;b|$HOME|*|", "argv must be literal", r.out)
    # forwarded SIGTERM reaches the program
    d = tempfile.mkdtemp(prefix="ct_it_")
    pr = subprocess.Popen([CUTRACE, "run", "-o", d, "--", "sleep", "30"], env=base_env())
    import time
    time.sleep(0.5)
    pr.send_signal(signal.SIGTERM)
    rc = pr.wait(timeout=10)
    need(rc == 128 + 15, "SIGTERM forwarded, status 143 (got %d)" % rc)
    shutil.rmtree(d, ignore_errors=True)


@test
def t_run_bad_usage():
    for args, frag in [(["run"], "no command"), (["run", "--inject", "bogus:x", "--", "true"], "unknown call 'bogus'"),
                       (["run", "--inject", "open:frob=1:error=EPERM", "--", "true"], "unknown key 'frob'"),
                       (["run", "--inject", "cuInit:error=EPERM", "--", "true"], "retval="),
                       (["run", "--inject", "open:path=/x:error=EWHAT", "--", "true"], "unknown errno"),
                       (["run", "--inject", "ioctl:nr=FOO:error=EIO", "--", "true"], "unknown ioctl 'FOO'"),
                       (["run", "--inject", "open:path=/x:error=EIO:when=0", "--", "true"], "when=0"),
                       (["run", "--inject", "cuInit:delay=soon", "--", "true"], "delay=soon"),
                       (["run", "--scenario", "nope", "--", "true"], "unknown scenario"),
                       (["run", "-o", "/proc/nope/x", "--", "true"], "trace directory"),
                       (["run", "--frob", "--", "true"], "unknown option")]:
        p = subprocess.run([CUTRACE] + args, capture_output=True, text=True, env=base_env())
        need(p.returncode == 2, "%r should exit 2, got %d" % (args, p.returncode), p.stderr)
        need(frag in p.stderr, "%r: message lacks %r" % (args, frag), p.stderr)
        if "--inject" in args:
            # one line naming the problem, and where the grammar is
            need(p.stderr.count("\n") == 1, "a bad rule should be one line", p.stderr)
            need("(see 'cutrace run --help-inject')" in p.stderr, "a bad rule should point at --help-inject", p.stderr)


# ---------------------------------------------------------------------------------
# Issue: fault injection
# ---------------------------------------------------------------------------------
@test
def t_inject_each_action():
    cases = [
        # rule, program, check(p, run)
        ("open:path=/dev/nvidia-uvm:error=EPERM", "probe",
         lambda p, r: (first(p, "open", target="/dev/nvidia-uvm")["errno_name"] == "EPERM"
                       and first(p, "cuInit")["result"] == 999)),
        ("ioctl:nr=UVM_REGISTER_GPU:error=EIO", "probe",
         lambda p, r: first(p, "ioctl", name="UVM_REGISTER_GPU")["errno_name"] == "EIO"
         and first(p, "cuInit")["result"] == 3),
        ("ioctl:nr=UVM_REGISTER_GPU:status=NV_ERR_INSUFFICIENT_RESOURCES", "probe",
         lambda p, r: first(p, "ioctl", name="UVM_REGISTER_GPU")["status_name"] == "NV_ERR_INSUFFICIENT_RESOURCES"
         and first(p, "cuInit")["result"] == 3),
        ("ioctl:cmd=0x101:status=0x1b", "probe",
         lambda p, r: first(p, "cuInit")["result"] == 100),
        ("ioctl:cmd=0x101:version=590.48.01", "probe",
         lambda p, r: first(p, "cuInit")["result"] == 803 and verdict(p)["layer"] == "kernel-handshake"),
        ("ioctl:nr=NV_ESC_RM_ALLOC:class=0xa06c:status=NV_ERR_IN_USE", "probe --ctx",
         lambda p, r: "46" in r.out or any(e["result"] not in (0, None) for e in events(p, "cuDevicePrimaryCtxRetain"))),
        ("dlopen:lib=libcuda.so*:error=ENOENT", "rt_shared",
         lambda p, r: "cudaGetDeviceCount=35" in r.out and verdict(p)["layer"] == "loader"),
        ("dlopen:lib=libcuda.so.1:error=ELFCLASS32", "probe",
         lambda p, r: "wrong ELF class: ELFCLASS32" in first(p, "dlopen", target="libcuda.so.1")["args"]["dlerror"]),
        ("dlsym:sym=cuInit:error=ENOENT", "probe",
         lambda p, r: r.rc != 0 and not first(p, "dlsym", target_has="cuInit")["ok"]),
        ("cuInit:retval=CUDA_ERROR_NOT_INITIALIZED", "probe",
         lambda p, r: first(p, "cuInit")["result"] == 3 and first(p, "cuInit")["injected"]),
        ("cuDriverGetVersion:value=12040", "rt_shared",
         lambda p, r: "cudaGetDeviceCount=35" in r.out),
        ("cuDeviceGetCount:value=3", "probe", lambda p, r: "count 3" in r.out),
        ("cuDeviceGet:retval=101", "probe_linked", lambda p, r: first(p, "cuDeviceGet")["result"] == 101),
        ("cuDevicePrimaryCtxRetain:retval=CUDA_ERROR_DEVICE_UNAVAILABLE", "probe --ctx",
         lambda p, r: first(p, "cuDevicePrimaryCtxRetain")["result"] == 46),
        ("nvmlInit:retval=NVML_ERROR_UNKNOWN", "probe --nvml", lambda p, r: "= 999" in r.out),
        ("cuInit:delay=300ms", "probe",
         lambda p, r: first(p, "cuInit")["dur_ns"] >= 300e6 and first(p, "cuInit")["result"] == 0),
    ]
    for rule, prog, check in cases:
        r = cutrace_run(prog_argv(prog), rig_env(), inject=[rule])
        p = r.proc()
        ok = False
        try:
            ok = check(p, r)
        except Fail:
            ok = False
        need(ok, "rule %r did not act as expected" % rule, r.out, r.err[:2000])
        need(p["flags"]["inject"], "trace not marked as injected: " + rule)
        need(any(e["injected"] for e in p["events"]), "no event marked injected: " + rule)
        if not verdict(p)["ok"]:
            need(verdict(p)["injected"], "verdict must say injected: " + rule, verdict(p))
        cleanup(r)


@test
def t_inject_when_and_env():
    # when=2: only the second open of nvidia-uvm fails (libcuda opens it twice)
    r = cutrace_run([PROBE], rig_env(), inject=["open:path=/dev/nvidia-uvm:error=EPERM:when=2"])
    opens = [e for e in events(r.proc()) if e["call"].startswith("open") and e["target"] == "/dev/nvidia-uvm"]
    need(len(opens) >= 2 and opens[0]["ok"] and not opens[1]["ok"], "when=2", [(e["ok"], e["injected"]) for e in opens])
    cleanup(r)
    # CUTRACE_INJECT from the environment, several rules separated by ';'
    r = preload_run([PROBE], rig_env(CUTRACE_INJECT="cuDeviceGetCount:value=5; cuDriverGetVersion:value=12345"))
    need("count 5" in r.out and "12345" in r.out, "CUTRACE_INJECT rules", r.out)
    cleanup(r)


@test
def t_inject_bad_env_rule():
    r = preload_run([PROBE], rig_env(CUTRACE_INJECT="cuInit:retval=NOPE"))
    lines = [l for l in r.err.splitlines() if l.startswith("cutrace")]
    need(len(lines) == 1 and "ignoring CUTRACE_INJECT" in lines[0], "one warning line", r.err)
    need("cuInit(0) = 0" in r.out, "nothing injected", r.out)
    p = r.proc()
    need(p["flags"]["inject_malformed"] and not any(e["injected"] for e in p["events"]), "flags")
    cleanup(r)


@test
def t_inject_when_across_threads():
    prog = E["WHEN_THREADS"]
    r = preload_run([prog, "8", "25"], rig_env(CUTRACE_INJECT="cuDeviceGetCount:retval=999:when=11..30"))
    need(r.rc == 0, "when_threads failed", r.out, r.err)
    need("injected=20 total=200" in r.out, "exactly 20 of 200 calls from 8 threads injected", r.out)
    p = r.proc()
    inj = [e for e in events(p, "cuDeviceGetCount") if e["injected"]]
    need(len(inj) == 20, "20 injected events in the trace, got %d" % len(inj))
    cleanup(r)


@test
def t_inject_rank():
    for rank, want in (("3", True), ("2", False)):
        r = preload_run([PROBE], rig_env(RANK=rank, CUTRACE_INJECT="open:path=/dev/nvidiactl:error=EPERM:rank=3"))
        failed = "cuInit(0) = 100" in r.out
        need(failed == want, "rank=3 rule with RANK=%s: failed=%s" % (rank, failed), r.out)
        cleanup(r)


# scenarios: each through the rig (and the real cudart where the rig allows), then replayed
SCENARIO_EXPECT = {
    # scenario: (program, layer, final code)
    "no-driver-library": ("rt_shared", "loader", 35),
    "wrong-elf-class": ("rt_shared", "loader", 35),
    "stub-library": ("rt_shared", "loader", 34),
    "insufficient-driver": ("rt_shared", "runtime", 35),
    "ctl-missing": ("probe", "device-node", 100),
    "ctl-denied": ("probe", "device-node", 100),
    "gpu-denied": ("probe", "device-node", 100),
    "gpu-init-failed": ("probe", "device-node", 100),
    "uvm-missing": ("probe", "device-node", 999),
    "uvm-denied": ("probe", "device-node", 999),
    "mig-caps-denied": ("probe", "device-node", 100),  # on the rig's MIG mode (FAKECUDA_MIG)
    "uvm-init-failed": ("probe", "uvm", 999),
    "uvm-register-gpu-failed": ("probe", "uvm", 3),
    "version-skew": ("probe", "kernel-handshake", 803),
    "nvml-mismatch": ("probe --nvml", "kernel-handshake", 18),
    "compat-mismatch": ("probe", "kernel-handshake", 803),
    "compat-unsupported": ("probe", "driver-api", 804),
    "system-not-ready": ("probe", "driver-api", 802),
    "no-visible-device": ("probe", "driver-api", 100),
    "cvd-wrong-uuid": ("probe", "driver-api", 100),
    "invalid-ordinal": ("probe_linked", "driver-api", 101),
    "devices-unavailable": ("probe --ctx", "driver-api", 46),
    "rm-permission": ("probe", "resource-manager", 100),
    "card-info-failed": ("probe", "resource-manager", 100),
    "gpu-lost": ("probe", "device-node", 100),
    "cc-not-ready": ("probe --ctx", "resource-manager", 999),
    "caps-no-compute": ("rt_shared", "loader", 35),
    "uvm-not-in-container": ("probe", "device-node", 999),
    "sandbox-rejected": ("probe", "resource-manager", 100),
    "vgpu-unlicensed": ("probe --ctx", "driver-api", 46),
}


def scenario_env(name):
    if name == "stub-library":
        return base_env(CUDA_HOME=E.get("CUDA_HOME_FOR_TESTS", "/usr/local/cuda"))
    if name in ("no-driver-library", "wrong-elf-class"):
        return base_env(LD_PRELOAD=FAKENV)  # real cudart, no libcuda at all
    if name == "mig-caps-denied":
        return rig_env(FAKECUDA_MIG="1")
    return rig_env()


def make_scenario_test(name):
    prog, layer, final = SCENARIO_EXPECT[name]

    def t():
        env = scenario_env(name)
        r = cutrace_run(prog_argv(prog), env, scenario=name)
        ps = [p for p in r.procs if not verdict(p)["ok"]]
        need(ps, "scenario %s: no failed process" % name, r.out, r.err)
        p = ps[0]
        expect_verdict(p, layer, None, final)
        if name not in ("stub-library", "no-visible-device", "cvd-wrong-uuid"):
            need(verdict(p)["injected"], "verdict says injected", verdict(p))
        # replay the recorded trace around the same program: same verdict
        files = sorted(f for f in os.listdir(r.dir) if f.endswith(".cutrace"))
        trace = os.path.join(r.dir, files[0]) if len(files) == 1 else r.dir
        d2 = tempfile.mkdtemp(prefix="ct_rp_")
        env2 = dict(env)
        if name == "stub-library":
            env2 = base_env(CUDA_HOME=E.get("CUDA_HOME_FOR_TESTS", "/usr/local/cuda"))
        rp = subprocess.run([CUTRACE, "replay", "-o", d2, trace, "--"] + prog_argv(prog), env=env2,
                            capture_output=True, text=True, timeout=60)
        need(rp.returncode == 0 and "replay: reproduced" in rp.stdout,
             "replay of %s not reproduced (rc %d)" % (name, rp.returncode), rp.stdout, rp.stderr)
        shutil.rmtree(d2, ignore_errors=True)
        cleanup(r)
    t.__name__ = "t_scenario_" + name
    return t


for _s in SCENARIO_EXPECT:
    TESTS["scenario_" + _s.replace("-", "_")] = make_scenario_test(_s)


@test
def t_scenario_list():
    p = subprocess.run([CUTRACE, "scenarios"], capture_output=True, text=True)
    names = [l.split()[0] for l in p.stdout.splitlines() if l.strip()]
    need(p.returncode == 0 and len(names) >= 20, "scenarios list", p.stdout)
    for n in SCENARIO_EXPECT:
        need(n in names, "scenario %s not listed" % n)


@test
def t_replay_print():
    r = cutrace_run([PROBE], rig_env(FAKENV_DENY="/dev/nvidia-uvm=EPERM"))
    p = subprocess.run([CUTRACE, "replay", "--print", r.dir], capture_output=True, text=True)
    need(p.returncode == 0 and "rules:    open:path=/dev/nvidia-uvm:error=EPERM" in p.stdout, "replay --print",
         p.stdout, p.stderr)
    ok = cutrace_run([PROBE], rig_env())
    p = subprocess.run([CUTRACE, "replay", "--print", ok.dir], capture_output=True, text=True)
    need(p.returncode == 2 and "nothing to replay" in p.stderr, "healthy trace cannot be replayed", p.stderr)
    cleanup(r)
    cleanup(ok)


# ---------------------------------------------------------------------------------
# Issue: probe, many processes
# ---------------------------------------------------------------------------------
@test
def t_probe_command():
    env = base_env()
    p = subprocess.run([CUTRACE, "probe", "-o", tempfile.mkdtemp(prefix="ct_it_")], capture_output=True, text=True,
                       env=env)
    need(p.returncode == 1 and "FAILED [loader]" in p.stdout, "probe without a driver: loader verdict",
         p.stdout, p.stderr)
    env = rig_env()
    p = subprocess.run([CUTRACE, "probe", "-o", tempfile.mkdtemp(prefix="ct_it_")], capture_output=True, text=True,
                       env=env)
    need(p.returncode == 0 and ": OK" in p.stdout and "NV_ESC_CARD_INFO" in p.stdout, "probe on the rig",
         p.stdout[-3000:], p.stderr)


@test
def t_many_processes_summary():
    d = tempfile.mkdtemp(prefix="ct_it_")
    # 4 "ranks": rank 2 loses /dev/nvidia-uvm through a rank= rule
    script = "for r in 0 1 2 3; do RANK=$r %s >/dev/null & done; wait" % PROBE
    p = subprocess.run([CUTRACE, "run", "-o", d, "--inject", "open:path=/dev/nvidia-uvm:error=EPERM:rank=2", "--",
                        "sh", "-c", script], env=rig_env(), capture_output=True, text=True, timeout=60)
    s = subprocess.run([CUTRACE, "show", d], capture_output=True, text=True)
    need(s.returncode == 1, "show exits 1", s.returncode)
    head = s.stdout.split("\n\n")[0]
    need("4 processes traced: 3 healthy, 1 failed" in head, "summary first", head)
    need("rank 2 " in head and "rank 0" not in head, "summary names rank 2 only", head)
    doc = json.loads(subprocess.run([CUTRACE, "show", "--json", d], capture_output=True, text=True).stdout)
    g = doc["summary"]["groups"]
    need(len(g) == 1 and [m["rank"] for m in g[0]["members"]] == [2], "JSON summary groups", g)
    shutil.rmtree(d, ignore_errors=True)


@test
def t_injected_hang():
    """delay= on an ioctl: the enter is recorded before the shim holds the
    call, so a program killed while held shows the ioctl as never returned
    (measured on the H200: without it the trace ended before the ioctl)."""
    r = cutrace_run(["timeout", "-s", "KILL", "2", PROBE], rig_env(), scenario="hang-in-cuinit", timeout=60)
    need(r.rc == 137, "timeout kills the held probe (137), got %d" % r.rc, r.out, r.err)
    p = r.proc("cutrace-probe")
    hung = [e for e in events(p, "ioctl") if not e["returned"]]
    need(len(hung) == 1 and hung[0]["name"] == "UVM_REGISTER_GPU", "the held ioctl is in the trace", hung)
    v = expect_verdict(p, "uvm", "ioctl", injected=True)
    need(v["hung"], "hung verdict", v)
    cleanup(r)


@test
def t_shim_exports():
    """libcutrace.so exports exactly the names of its version script (made
    from common/hooks.def at build time: build/shim/shim.map), needs only libc (and
    libdl/ld.so), and the shim never calls dlsym for its own real functions:
    those come from dlvsym (resolve.c), so its own dlsym hook is never
    re-entered."""
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "..", "shim")
    want = set()
    with open(os.path.join(os.path.dirname(SHIM), "..", "shim", "shim.map")) as f:
        body = f.read().split("global:")[1].split("local:")[0]
    for tok in body.replace("\n", " ").split(";"):
        tok = tok.strip()
        if tok:
            want.add(tok)
    nm = subprocess.run(["nm", "-D", "--defined-only", SHIM], capture_output=True, text=True)
    need(nm.returncode == 0, "nm -D works", nm.stderr)
    got = {line.split()[-1].split("@")[0] for line in nm.stdout.splitlines() if line.strip()}
    need(got == want, "exports == shim.map", "extra: %s" % sorted(got - want), "missing: %s" % sorted(want - got))
    rd = subprocess.run(["readelf", "-d", SHIM], capture_output=True, text=True)
    needed = [l.split("[")[1].rstrip("]") for l in rd.stdout.splitlines() if "(NEEDED)" in l]
    need(needed and all(n.startswith(("libc.so", "libdl.so", "ld-linux")) for n in needed),
         "NEEDED only libc/libdl", needed)
    # real functions: ct_real.dlsym(RTLD_NEXT, ...) is the resolved libc dlsym,
    # never a bare dlsym( call that would land in our own hook
    import re
    for name in sorted(os.listdir(src)):
        if not name.endswith(".c"):
            continue
        with open(os.path.join(src, name)) as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        for m in re.finditer(r"(?<![\w.>])dl(v?)sym\s*\(", text):
            line = text[:m.start()].count("\n") + 1
            ctx = text[text.rfind("\n", 0, m.start()) + 1:text.find("\n", m.start())]
            need(re.match(r"\s*(CT_EXPORT\s+)?void\s*\*\s*dl", ctx) or "hook_" in ctx or "__asm__" in ctx,
                 "%s:%d calls dl%ssym directly" % (name, line, m.group(1)), ctx)


def load_modules():
    """Tests of an area may live in tests/integration/it_AREA.py: each runs with
    this module's names (test, need, cutrace_run, rig_env, ...) in scope."""
    import glob
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    shared = {k: v for k, v in globals().items() if not k.startswith("__")}
    for path in sorted(glob.glob(os.path.join(here, "it_*.py"))):
        name = os.path.basename(path)[:-3]
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        mod.__dict__.update(shared)
        spec.loader.exec_module(mod)


def main():
    load_modules()
    if len(sys.argv) > 1 and sys.argv[1] == "--list":
        print("\n".join(sorted(TESTS)))
        return 0
    bad = 0
    for name in sys.argv[1:]:
        try:
            TESTS[name]()
            print("ok   %s" % name)
        except Fail as e:
            print("FAIL %s: %s" % (name, e))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
