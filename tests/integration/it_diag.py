"""Integration tests of the diagnosis and the CLI around it (issue 4's audit):
verdicts the other modules do not reach, the job summary, `show` over many
files and directories, `probe --json`, usage errors, the installed tree,
colour, --help.  Loaded by itest.py, which puts test, need, cutrace_run,
rig_env, base_env, events, first, expect_verdict, ... in scope."""
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "h200-580")
TRY_HELP = "(try 'cutrace probe --help')"


def show_json(path):
    p = subprocess.run([CUTRACE, "show", "--json", path], capture_output=True, text=True)
    need(p.returncode in (0, 1), "show --json %s: rc %d" % (path, p.returncode), p.stderr)
    return json.loads(p.stdout)


def fixture(name, into):
    """a real H200 trace (gzip'ed in the repository), decompressed into a directory"""
    out = os.path.join(into, name + ".cutrace")
    with gzip.open(os.path.join(FIXTURES, name + ".cutrace.gz"), "rb") as f, open(out, "wb") as g:
        g.write(f.read())
    return out


def fixture_verdict(name):
    d = tempfile.mkdtemp(prefix="ct_fx_")
    try:
        doc = show_json(fixture(name, d))
        need(len(doc["processes"]) == 1, "one process in fixture %s" % name)
        return doc["processes"][0]["verdict"]
    finally:
        shutil.rmtree(d, ignore_errors=True)


def one_failed(r):
    ps = [p for p in r.procs if not verdict(p)["ok"]]
    need(len(ps) == 1, "want exactly one failed process, got %d" % len(ps), r.err,
         [(p["exe"], verdict(p)["summary"]) for p in r.procs])
    return ps[0]


# ---------------------------------------------------------------------------------
# probe --json and usage errors
# ---------------------------------------------------------------------------------
@test
def t_probe_json_is_one_document():
    for env, want_rc, want_ok in ((rig_env(), 0, True), (base_env(), 1, False)):
        d = tempfile.mkdtemp(prefix="ct_it_")
        p = subprocess.run([CUTRACE, "probe", "--json", "-o", d], capture_output=True, text=True, env=env,
                           timeout=60)
        need(p.returncode == want_rc, "probe --json rc %d, want %d" % (p.returncode, want_rc), p.stderr)
        try:
            doc = json.loads(p.stdout)
        except ValueError as e:
            raise Fail("probe --json stdout is not one JSON document: %s" % e, p.stdout[:600])
        need(len(doc["processes"]) == 1 and doc["processes"][0]["verdict"]["ok"] == want_ok,
             "probe --json verdict", [x["verdict"] for x in doc["processes"]])
        # the probe's own lines went to stderr, not into the document
        need("libcuda" in p.stderr, "the probe's output should be on stderr", p.stderr)
        shutil.rmtree(d, ignore_errors=True)


@test
def t_probe_usage_errors_one_line():
    for args, frag in ((["--frob"], "unknown option '--frob'"), (["--", "ls"], "'ls'"), (["ls"], "'ls'"),
                       (["--size"], "--size needs a value"), (["--color=sometimes"], "sometimes")):
        p = subprocess.run([CUTRACE, "probe"] + args, capture_output=True, text=True, env=base_env())
        lines = p.stderr.splitlines()
        need(p.returncode == 2, "probe %r: rc %d, want 2" % (args, p.returncode), p.stderr)
        need(len(lines) == 1 and frag in lines[0] and lines[0].endswith(TRY_HELP),
             "probe %r: want one line with %r ending in the --help hint" % (args, frag), p.stderr)
        need(p.stdout == "", "nothing on stdout for a usage error", p.stdout)


@test
def t_help_every_command():
    p = subprocess.run([CUTRACE, "--help"], capture_output=True, text=True)
    need(p.returncode == 0 and p.stdout.startswith("usage: cutrace"), "cutrace --help", p.returncode, p.stdout)
    cmds = [l.split()[0] for l in p.stdout.split("commands:")[1].split("\n\n")[0].splitlines() if l.strip()]
    need(set(cmds) >= {"run", "show", "probe", "doctor", "scenarios", "replay"}, "commands listed", cmds)
    for c in cmds:
        for flag in ("--help", "-h"):
            p = subprocess.run([CUTRACE, c, flag], capture_output=True, text=True, env=base_env(), timeout=60)
            need(p.returncode == 0, "cutrace %s %s: rc %d" % (c, flag, p.returncode), p.stderr)
            need(p.stdout.startswith("usage: cutrace " + c), "cutrace %s %s prints its usage" % (c, flag),
                 p.stdout[:300])
    p = subprocess.run([CUTRACE], capture_output=True, text=True)
    need(p.returncode == 2 and "usage" in p.stderr, "no command: usage on stderr, rc 2", p.returncode)


# ---------------------------------------------------------------------------------
# NVML that cannot be loaded
# ---------------------------------------------------------------------------------
NVML_ONLY = "import ctypes\nctypes.CDLL('libnvidia-ml.so.1')\n"
CUDA_THEN_NVML = """import ctypes, sys
c = ctypes.CDLL('libcuda.so.1')
print('cuInit=%d' % c.cuInit(0))
try:
    ctypes.CDLL('/nonexistent/libnvidia-ml.so.1')
except OSError:
    print('nvml=missing')
"""


@test
def t_nvml_missing_is_a_loader_verdict():
    r = cutrace_run([PY, "-c", NVML_ONLY], base_env())
    need(r.rc != 0, "python should fail to load NVML", r.rc, r.err)
    p = r.proc("python")
    v = expect_verdict(p, "loader", "dlopen", summary_has="libnvidia-ml.so.1", injected=False)
    need("cannot open shared object file" in v["summary"], "the loader's message in the summary", v)
    need("utility" in (v["fix"] or ""), "the fix names the driver's utility capability", v)
    need("FAILED [loader]" in r.err, "cutrace run prints the loader verdict", r.err)
    cleanup(r)


@test
def t_nvml_missing_after_cuda_is_a_note():
    r = cutrace_run([PY, "-c", CUDA_THEN_NVML], rig_env())
    need(r.rc == 0 and "cuInit=0" in r.out and "nvml=missing" in r.out, "program", r.out, r.err)
    v = expect_verdict(r.proc("python"), "none")
    need(v["ok"] and "libnvidia-ml.so.1" in (v["notes"] or ""), "OK with a note about NVML", v)
    need("FAILED" not in r.err, "no failure printed", r.err)
    cleanup(r)


@test
def t_nvml_mismatch_after_cuda_says_cuda_works():
    """torch 2.11 calls nvmlInit after its context is up and carries on when it
    fails (measured on the H200, scenario nvml-mismatch): the verdict is NVML's
    failure, and says that CUDA itself works."""
    r = cutrace_run([PROBE, "--nvml"], rig_env(), scenario="nvml-mismatch")
    need("cuInit(0) = 0 " in r.out and "nvmlInit_v2() = 18" in r.out, "cuInit fine, NVML 18", r.out)
    v = expect_verdict(r.proc("cutrace-probe"), "kernel-handshake", "ioctl", 18, "CHECK_VERSION_STR", injected=True)
    need("CUDA itself initialized" in (v["notes"] or "") and "nvidia-smi" in v["notes"], "the note", v)
    cleanup(r)
    # when CUDA failed too, no such note
    r = cutrace_run([PROBE, "--nvml"], rig_env(), scenario="nvml-mismatch",
                    inject=["open:path=/dev/nvidia-uvm:error=EPERM"])
    v = verdict(r.proc("cutrace-probe"))
    need("CUDA itself initialized" not in (v["notes"] or ""), "no note when cuInit failed", v)
    cleanup(r)


# ---------------------------------------------------------------------------------
# hangs: grouping, wording, the loader, injected delays, a crash in a call
# ---------------------------------------------------------------------------------
@test
def t_hang_job_grouped():
    d = tempfile.mkdtemp(prefix="ct_it_")
    script = "for r in 0 1 2; do RANK=$r timeout -s KILL 2 %s >/dev/null & done; wait" % PROBE
    subprocess.run([CUTRACE, "run", "-q", "-o", d, "--", "sh", "-c", script],
                   env=rig_env(FAKENV_HANG_CMD="37", FAKENV_HANG_SEC="30"), capture_output=True, text=True,
                   timeout=60)
    s = subprocess.run([CUTRACE, "show", d], capture_output=True, text=True)
    head = s.stdout.split("\n\n")[0]
    need(s.returncode == 1, "show exits 1", s.returncode, s.stderr)
    need("3 processes traced: 0 healthy, 3 failed" in head, "summary", head)
    need(head.count("FAILED [") == 1 and "3 processes:" in head, "one group of 3 hung processes", head)
    need(re.search(r"3 processes: host (\S+) rank \d pid \d+, host \1 rank \d pid \d+, host \1 rank \d pid \d+(\n|$)", head),
         "each member: host, rank and pid; comma separated", head)
    g = show_json(d)["summary"]["groups"]
    need(len(g) == 1 and g[0]["hung"] and g[0]["count"] == 3 and g[0]["layer"] == "uvm",
         "JSON: one hung uvm group", g)
    need(sorted(m["rank"] for m in g[0]["members"]) == [0, 1, 2], "ranks", g)
    shutil.rmtree(d, ignore_errors=True)


@test
def t_hang_summary_says_it_once():
    r = cutrace_run(["timeout", "-s", "KILL", "2", PROBE], rig_env(FAKENV_HANG_CMD="37", FAKENV_HANG_SEC="30"))
    v = expect_verdict(r.proc("cutrace-probe"), "uvm", "ioctl", injected=False)
    need(v["hung"] and v["final"]["call"] == "cuInit", "hung in cuInit", v)
    need(v["summary"].count("never returned") == 1, "'never returned' once", v["summary"])
    need("cuInit" in v["summary"] and "UVM_REGISTER_GPU" in v["summary"], "both calls named", v["summary"])
    cleanup(r)


@test
def t_hang_in_loader():
    for rule, call, name in (("dlopen:lib=libcuda.so.1:delay=30s", "dlopen", "libcuda.so.1"),
                             ("dlsym:sym=cuInit:delay=30s", "dlsym", "cuInit")):
        r = cutrace_run(["timeout", "-s", "KILL", "1", PROBE], rig_env(), inject=[rule])
        need(r.rc == 137, "%s: the held probe is killed (137), got %d" % (rule, r.rc), r.err)
        p = r.proc("cutrace-probe")
        held = [e for e in events(p, call) if not e["returned"]]
        need(len(held) == 1, "%s: one %s never returned" % (rule, call), [e["target"] for e in events(p, call)])
        need(held[0]["injected"] and held[0].get("inject", {}).get("action") == "delay",
             "%s: the held call is marked injected on its enter record" % rule, held[0])
        v = expect_verdict(p, "loader", call, summary_has=name, injected=True)
        need(v["hung"] and not v["ok"] and "never returned" in v["summary"], "%s: a hang verdict" % rule, v)
        need("killed or crashed" in v["summary"], "the process died in it", v)
        cleanup(r)


@test
def t_hang_injected_delay_says_injected():
    r = cutrace_run(["timeout", "-s", "KILL", "1", PROBE], rig_env(), inject=["cuInit:delay=30s"])
    need(r.rc == 137, "killed", r.rc, r.err)
    v = expect_verdict(r.proc("cutrace-probe"), "driver-api", "cuInit", injected=True)
    need(v["hung"] and "inject" in v["summary"], "the summary says the delay was injected", v["summary"])
    need("(injected)" in r.err, "run's verdict line says injected", r.err)
    cleanup(r)
    # an old trace (the held ioctl was not recorded then): the rule in force is named
    v = fixture_verdict("hang-torch")
    need(v["hung"] and v["injected"] and "UVM_REGISTER_GPU:delay=1h" in v["summary"], "hang-torch fixture", v)
    # a newer one holds the enter of the ioctl that never returned (GPU run 3)
    v = fixture_verdict("hang-uvm")
    need(v["hung"] and v["injected"] and v["layer"] == "uvm", "hang-uvm fixture: the held ioctl's layer", v)
    need("inside ioctl(nvidia-uvm, UVM_REGISTER_GPU)" in v["summary"], "names the held ioctl", v["summary"])


@test
def t_crash_inside_a_call():
    # SIGSEGV while the process is inside cuInit (held in an ioctl by the fake kernel)
    r = cutrace_run(["timeout", "--preserve-status", "-s", "SEGV", "1", PROBE], rig_env(FAKENV_HANG_CMD="37", FAKENV_HANG_SEC="30"))
    need(r.rc == 128 + 11, "SIGSEGV status 139, got %d" % r.rc, r.err)
    p = r.proc("cutrace-probe")
    need(p["flags"]["exited"] is False, "a crashed process did not run its exit handlers")
    v = expect_verdict(p, "uvm", "ioctl")
    need(v["hung"] and "crashed" in v["summary"], "verdict says killed or crashed", v)
    cleanup(r)


# ---------------------------------------------------------------------------------
# verdicts not covered elsewhere, with step and summary
# ---------------------------------------------------------------------------------
def compat_dir(name):
    """a cuda-compat style directory: .../compat/libcuda.so.1 (a copy of the fake)"""
    root = tempfile.mkdtemp(prefix="ct_compat_")
    comp = os.path.join(root, "cuda", "compat")
    os.makedirs(comp)
    shutil.copy(os.path.join(FAKECUDA, "libcuda.so.1"), os.path.join(comp, name))
    if name != "libcuda.so.1":
        os.symlink(name, os.path.join(comp, "libcuda.so.1"))
    return root, comp


@test
def t_verdict_compat_overlay_804():
    root, comp = compat_dir("libcuda.so.1")
    r = cutrace_run([PROBE], base_env(LD_PRELOAD=FAKENV, LD_LIBRARY_PATH=comp, FAKECUDA_COMPAT="1"))
    p = r.proc("cutrace-probe")
    v = expect_verdict(p, "loader", "dlopen", 804, os.path.join(comp, "libcuda.so.1"), injected=False)
    need("/compat/" in v["step"]["text"] and "804" in v["summary"], "the compat library is the step", v)
    need(v["contract"]["libcuda_kind"] == "compat", "libcuda kind compat", v["contract"])
    cleanup(r)
    shutil.rmtree(root, ignore_errors=True)


@test
def t_verdict_compat_mismatch_803():
    # a compat libcuda older than the kernel module (as the real 580.95.05 on 580.159.04)
    root, comp = compat_dir("libcuda.so.575.51.02")
    r = cutrace_run([PROBE], base_env(LD_PRELOAD=FAKENV, LD_LIBRARY_PATH=comp, FAKECUDA_VERSION="575.51.02"))
    v = expect_verdict(r.proc("cutrace-probe"), "kernel-handshake", "ioctl", 803, "575.51.02", injected=False)
    need("cuda-compat" in v["summary"] and "580.159.04" in v["summary"], "compat and kernel version named", v)
    need("GET_BUILD_VERSION" in v["step"]["text"], "the handshake is the step", v["step"])
    cleanup(r)
    shutil.rmtree(root, ignore_errors=True)
    # the real one (H200, LD_LIBRARY_PATH=/usr/local/cuda/compat)
    v = fixture_verdict("c1")
    need(v["layer"] == "kernel-handshake" and v["step"]["call"] == "ioctl" and v["final"]["code"] == 803,
         "c1 fixture: handshake verdict", v)
    need("580.95.05" in v["summary"] and "580.159.04" in v["summary"] and "compat" in v["summary"], "c1 summary", v)
    # version-skew under torch on the H200 (GPU run 3): the module reports 590.48.01, cudart 803
    v = fixture_verdict("t4")
    need(v["layer"] == "kernel-handshake" and v["step"]["call"] == "ioctl" and v["final"]["code"] == 803
         and v["injected"], "t4 fixture: handshake verdict", v)
    need("590.48.01" in v["summary"] and "580.159.04" in v["summary"] and "GET_BUILD_VERSION" in v["summary"],
         "t4 names both versions", v["summary"])


@test
def t_fixture_real_skew_on_gpu():
    """Issue 16 on the GPU (H100, module 580.159.04, 2026-12-05, scripts/gpu-skew.sh):
    NVIDIA's real libcuda / libnvidia-ml 535.309.01 first on LD_LIBRARY_PATH (or
    dlopen()ed by absolute path) in front of the 580 module.  Decoded here, each
    trace names the loaded copy, how the loader found it, and the fix; nothing is
    called injected; a runtime's 35 (static or shared, torch's "driver too old")
    is [loader], not "upgrade the driver"."""
    stale = "/tmp/cutrace-skew.3S0AOd/stale"
    ldp = "through LD_LIBRARY_PATH entry %s (1 of 3)" % stale
    cases = [  # fixture, layer, step call, final code, in the summary, in the fix
        ("skew-probe", "kernel-handshake", "ioctl", 803, ["535.309.01", "580.159.04", ldp],
         "remove %s from LD_LIBRARY_PATH" % stale),
        ("skew-rt11", "kernel-handshake", "ioctl", 803, ["535.309.01", ldp], "remove %s from LD_LIBRARY_PATH" % stale),
        ("skew-rt13static", "loader", "cuDriverGetVersion", None,
         ["an older libcuda was loaded", "linked statically", "12020", ldp, "the installed driver is new enough",
          "returns 35"], "remove %s from LD_LIBRARY_PATH" % stale),
        ("skew-rt13shared", "loader", "cuDriverGetVersion", 35,
         ["an older libcuda was loaded", ldp, "cudaGetDeviceCount = 35"], "remove %s from LD_LIBRARY_PATH" % stale),
        ("skew-torch", "loader", "cuDriverGetVersion", 35, ["an older libcuda was loaded", ldp],
         "remove %s from LD_LIBRARY_PATH" % stale),
        ("skew-nvml", "kernel-handshake", "ioctl", 18,
         ["NV_ESC_CHECK_VERSION_STR was rejected", "libnvidia-ml 535.309.01", ldp],
         "remove %s from LD_LIBRARY_PATH: the driver's own libnvidia-ml.so.580.159.04" % stale),
        ("skew-abspath", "kernel-handshake", "ioctl", 803,
         ['a dlopen by absolute path ("%s/libcuda.so.1")' % stale], "load libcuda.so.1 by name instead"),
    ]
    for name, layer, call, code, has, fix in cases:
        v = fixture_verdict(name)
        need(not v["ok"] and v["layer"] == layer and v["step"]["call"] == call and not v["injected"],
             "%s: [%s] at %s, not injected" % (name, layer, call), v)
        need(code is None or v["final"]["code"] == code, "%s: final code %s" % (name, code), v["final"])
        for h in has:
            need(h in v["summary"], "%s: the summary says %r" % (name, h), v["summary"])
        need(fix in v["fix"] and "reboot" not in v["fix"] and "upgrade" not in v["fix"],
             "%s: the fix names the path, no reboot or upgrade" % name, v["fix"])
    # a RUNPATH to the stale copy lost to the machine's LD_LIBRARY_PATH: healthy, and said so
    v = fixture_verdict("skew-runpath")
    need(v["ok"], "skew-runpath: cuInit succeeded with the machine's own libcuda", v)


@test
def t_fixture_real_cc_not_ready_and_vgpu():
    """Issue 19 on the GPU (H100, 580.159.04, 2026-12-05): the real libcuda turns an
    injected NV_ERR_NOT_READY on the channel allocation into cuDevicePrimaryCtxRetain
    = 600 (CUDA_ERROR_NOT_READY), named as confidential computing's ready state; an
    injected vGPU virtualization mode makes it allocate KEPLER_DEVICE_VGPU, which RM
    refuses on a GPU that is not virtual (NV_ERR_NOT_SUPPORTED): cuInit 100, that step
    named, injected (the rule fired upstream)."""
    v = fixture_verdict("cc-not-ready")
    need(v["layer"] == "resource-manager" and v["step"]["call"] == "ioctl" and v["injected"]
         and v["final"]["code"] == 600 and "confidential computing" in v["summary"]
         and "conf-compute" in v["fix"], "cc-not-ready fixture", v)
    v = fixture_verdict("vgpu-unlicensed")
    need(v["layer"] == "resource-manager" and v["final"]["code"] == 100 and v["injected"]
         and "RM_ALLOC KEPLER_DEVICE_VGPU -> NV_ERR_NOT_SUPPORTED" in v["summary"]
         and "GET_VIRTUALIZATION_MODE" in v["notes"], "vgpu-unlicensed fixture: the refused allocation", v)


@test
def t_verdict_system_not_ready_802():
    r = cutrace_run([PROBE], rig_env(FAKENV_FABRIC="not-ready"))
    v = expect_verdict(r.proc("cutrace-probe"), "driver-api", "cuInit", 802, "not ready", injected=False)
    need("fabric manager" in v["summary"] and "nvidia-fabricmanager" in v["fix"], "802 names the fabric manager", v)
    cleanup(r)
    v = fixture_verdict("i19")  # cudart on the H200 with cuInit:retval=802
    need(v["layer"] == "driver-api" and v["step"]["call"] == "cuInit" and v["final"]["code"] == 802
         and v["injected"], "i19 fixture", v)


@test
def t_verdict_caps_denied():
    r = cutrace_run([PROBE], rig_env(FAKECUDA_MIG="1"), inject=["open:path=/dev/nvidia-caps/nvidia-cap1:error=EPERM"])
    need(r.rc == 1, "probe fails", r.rc, r.out)
    v = expect_verdict(r.proc("cutrace-probe"), "device-node", "open", 100, "/dev/nvidia-caps/nvidia-cap1",
                       injected=True)
    need("capability" in v["summary"] and "EPERM" in v["summary"], "caps node named with its errno", v)
    need("nvidia-caps" in v["fix"], "the fix is about the caps nodes", v["fix"])
    cleanup(r)
    # and the knob itself: without the denial, the cap node is opened and all is well
    r = cutrace_run([PROBE], rig_env(FAKECUDA_MIG="1"))
    p = r.proc("cutrace-probe")
    need(first(p, "open", target="/dev/nvidia-caps/nvidia-cap1")["ok"], "cap node opened")
    expect_verdict(p, "none")
    cleanup(r)


@test
def t_verdict_gpu_node_missing():
    r = cutrace_run([PROBE], rig_env(FAKENV_MISSING="/dev/nvidia0"))
    v = expect_verdict(r.proc("cutrace-probe"), "device-node", "open", 100, "/dev/nvidia0", injected=False)
    need("ENOENT" in v["summary"] and "does not exist" in v["summary"], "missing GPU node", v)
    cleanup(r)


@test
def t_verdict_stub_step():
    r = cutrace_run([os.path.join(PROGS, "rt_shared")], base_env(LD_LIBRARY_PATH=STUB))
    v = expect_verdict(r.proc("rt_shared"), "loader", "dlopen", 34, "stub")
    need("/stubs/" in v["step"]["text"] and "/stubs/" in v["summary"], "the stub's load is the step", v)
    need(v["contract"]["libcuda_kind"] == "stub", "contract libcuda kind", v["contract"])
    cleanup(r)


@test
def t_contract_on_real_traces():
    for name, source in (("torch", "libcudart file name"), ("rtshared", "cudaRuntimeGetVersion"),
                         ("rtstatic", "cuGetProcAddress cudaVersion")):
        v = fixture_verdict(name)
        c = v["contract"]
        need(v["ok"] and c["class"] == "native" and c["rule"].startswith("native:"), "%s: native" % name, c)
        need(c["runtime_version"] == 13000 and c["driver_version"] == 13000, "%s: versions" % name, c)
        need(c["runtime_version_from"] == source and source in c["rule"], "%s: runtime from %s" % (name, source), c)
        need(c["libcuda_kind"] == "host" and c["kernel_module_version"] == "580.159.04", "%s: libcuda" % name, c)
    for name in ("i14", "t3"):  # cuDriverGetVersion:value=12040 under a CUDA 13 runtime
        v = fixture_verdict(name)
        c = v["contract"]
        need(c["class"] == "mismatch" and c["rule"].startswith("mismatch:") and "35" in c["rule"],
             "%s: mismatch" % name, c)
        need(c["driver_version"] == 12040 and c["runtime_version"] == 13000, "%s: versions" % name, c)
        need(v["layer"] == "runtime" and v["step"]["call"] == "cuDriverGetVersion", "%s: runtime verdict" % name, v)


# ---------------------------------------------------------------------------------
# cutrace run: the timeline, -q, LD_PRELOAD, children
# ---------------------------------------------------------------------------------
@test
def t_run_prints_timeline_and_q_hides_it():
    env = rig_env(FAKENV_DENY="/dev/nvidia-uvm=EPERM")
    r = cutrace_run([PROBE], env)
    need("timeline around the failing step" in r.err, "timeline printed", r.err)
    marked = [l for l in r.err.splitlines() if l.lstrip().startswith(">>")]
    need(len(marked) == 1 and "/dev/nvidia-uvm" in marked[0] and "EPERM" in marked[0],
         "the failing step is marked >>", marked)
    ctx = r.err.split("timeline around the failing step")[1].splitlines()[1:]
    need(sum(1 for l in ctx if " ms " in l) >= 3, "events around the step", ctx[:12])
    cleanup(r)
    r = cutrace_run([PROBE], env, extra=["-q"])
    need("FAILED [device-node]" in r.err, "-q still prints the failed verdict", r.err)
    need("timeline around" not in r.err and ">>" not in r.err, "-q: no timeline", r.err)
    cleanup(r)
    r = cutrace_run([PROBE], rig_env(), extra=["-q"])
    need("cutrace:" not in r.err, "-q with a healthy run prints nothing", r.err)
    cleanup(r)


@test
def t_run_prepends_ld_preload():
    r = cutrace_run(["sh", "-c", 'echo "LDP=$LD_PRELOAD"'], rig_env())
    line = [l for l in r.out.splitlines() if l.startswith("LDP=")]
    need(line, "printed", r.out)
    parts = line[0][4:].split(":")
    need(len(parts) == 2 and os.path.basename(parts[0]) == "libcutrace.so" and parts[1] == FAKENV,
         "the shim first, the existing LD_PRELOAD kept after it", parts)
    cleanup(r)
    # and the preloaded fake kernel still works behind the shim
    r = cutrace_run([PROBE], rig_env())
    need(r.rc == 0, "probe under shim + fakenv", r.err)
    expect_verdict(r.proc("cutrace-probe"), "none")
    cleanup(r)


MP_CHILDREN = """import ctypes, multiprocessing as mp, sys
def child(q):
    q.put(ctypes.CDLL('libcuda.so.1').cuInit(0))
if __name__ == '__main__':
    for method in ('spawn', 'forkserver'):
        ctx = mp.get_context(method)
        q = ctx.Queue()
        p = ctx.Process(target=child, args=(q,))
        p.start()
        print(method, q.get(timeout=30))
        p.join()
        sys.stdout.flush()
"""


@test
def t_run_follows_multiprocessing_children():
    d = tempfile.mkdtemp(prefix="ct_mp_")
    script = os.path.join(d, "mp_children.py")
    with open(script, "w") as f:
        f.write(MP_CHILDREN)
    r = cutrace_run([PY, script], rig_env(), timeout=90)
    need(r.rc == 0 and "spawn 0" in r.out and "forkserver 0" in r.out, "children ran", r.out, r.err)
    with_init = [p for p in r.procs if events(p, "cuInit")]
    need(len(with_init) == 2, "cuInit traced in both children, got %d" % len(with_init),
         [(p["pid"], p["cmdline"]) for p in r.procs])
    need(all(first(p, "cuInit")["result"] == 0 and verdict(p)["ok"] for p in with_init), "children healthy")
    kinds = sorted(("spawn" if "spawn_main" in " ".join(p["cmdline"]) else
                    "forkserver" if "forkserver" in " ".join(p["cmdline"]) and p["flags"]["forked"] else "?")
                   for p in with_init)
    need(kinds == ["forkserver", "spawn"], "a spawn child and a child forked by the forkserver",
         [(p["cmdline"][:4], p["flags"]["forked"]) for p in with_init])
    cleanup(r)
    shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------------
# show over many files and directories
# ---------------------------------------------------------------------------------
@test
def t_show_many_arguments_and_subdirectories():
    top = tempfile.mkdtemp(prefix="ct_show_")
    hosts = {"hostA": "/dev/nvidia-uvm=EPERM", "hostB": None}
    for h, deny in hosts.items():
        env = rig_env(FAKENV_DENY=deny) if deny else rig_env()
        for rank in (0, 1):
            d = tempfile.mkdtemp(prefix="ct_it_")
            subprocess.run([CUTRACE, "run", "-q", "-o", d, "--", PROBE], capture_output=True,
                           env=dict(env, RANK=str(rank)), timeout=60)
            os.makedirs(os.path.join(top, "job", h), exist_ok=True)
            for f in glob.glob(os.path.join(d, "*.cutrace")):
                shutil.move(f, os.path.join(top, "job", h))
            shutil.rmtree(d, ignore_errors=True)
    job = os.path.join(top, "job")
    a, b = os.path.join(job, "hostA"), os.path.join(job, "hostB")
    files = sorted(glob.glob(os.path.join(a, "*.cutrace")) + glob.glob(os.path.join(b, "*.cutrace")))
    need(len(files) == 4, "4 traces", files)
    for args in ([job], [a, b], files):
        s = subprocess.run([CUTRACE, "show", "--no-time", "--pids", "--all"] + args, capture_output=True, text=True)
        head = s.stdout.split("\n\n")[0]
        need(s.returncode == 1, "show %r exits 1" % args, s.returncode, s.stderr)
        need("4 processes traced: 2 healthy, 2 failed" in head, "one job summary for %r" % args, head)
        need(re.search(r"2 processes: host (\S+) rank [01] pid \d+, host \1 rank [01] pid \d+( \(exit 1\))?(\n|$)", head),
             "members: host, then rank and pid, comma separated", head)
        need("|" not in head, "no stray separators", head)
        need(s.stdout.count("\nprocess ") + s.stdout.startswith("process ") == 4, "every process shown")
        doc = json.loads(subprocess.run([CUTRACE, "show", "--json"] + args, capture_output=True, text=True).stdout)
        need(len(doc["processes"]) == 4 and doc["summary"]["failed"] == 2, "JSON over %r" % args, doc["summary"])
    # one process: no job summary
    s = subprocess.run([CUTRACE, "show", files[0]], capture_output=True, text=True)
    need("processes traced" not in s.stdout and "process traced" not in s.stdout, "no summary for one trace")
    # a directory with nothing in it, at any depth
    empty = os.path.join(top, "empty", "sub")
    os.makedirs(empty)
    s = subprocess.run([CUTRACE, "show", os.path.dirname(empty)], capture_output=True, text=True)
    need(s.returncode == 2 and "no trace files" in s.stderr and "subdirectories" in s.stderr, "empty tree",
         s.returncode, s.stderr)
    shutil.rmtree(top, ignore_errors=True)


# ---------------------------------------------------------------------------------
# colour
# ---------------------------------------------------------------------------------
def on_pty(argv, env):
    """run argv with stdout and stderr on a pseudo-terminal; returns (rc, output)"""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(timeout=60), out.decode("utf-8", "replace")


@test
def t_colour_on_terminal_only():
    r = cutrace_run([PROBE], rig_env(FAKENV_MISSING="/dev/nvidiactl"))
    esc = "\x1b["
    rc, out = on_pty([CUTRACE, "show", r.dir], base_env())
    need(rc == 1 and esc in out and "FAILED" in out, "colour on a terminal", rc, out[-500:])
    rc, out = on_pty([CUTRACE, "show", r.dir], base_env(NO_COLOR="1"))
    need(rc == 1 and esc not in out and "FAILED" in out, "NO_COLOR=1 turns it off", out[-500:])
    rc, out = on_pty([CUTRACE, "show", "--color=never", r.dir], base_env())
    need(esc not in out, "--color=never on a terminal", out[-300:])
    p = subprocess.run([CUTRACE, "show", r.dir], capture_output=True, text=True, env=base_env())
    need(esc not in p.stdout, "no colour into a pipe")
    p = subprocess.run([CUTRACE, "show", "--color=always", r.dir], capture_output=True, text=True, env=base_env())
    need(esc in p.stdout, "--color=always into a pipe")
    # cutrace run's verdicts (stderr) follow the same rule
    d = tempfile.mkdtemp(prefix="ct_it_")
    rc, out = on_pty([CUTRACE, "run", "-o", d, "--", PROBE], rig_env(FAKENV_MISSING="/dev/nvidiactl"))
    need(esc in out and "FAILED" in out, "run: colour on a terminal", out[-500:])
    d2 = tempfile.mkdtemp(prefix="ct_it_")
    rc, out = on_pty([CUTRACE, "run", "-o", d2, "--", PROBE], rig_env(FAKENV_MISSING="/dev/nvidiactl", NO_COLOR="1"))
    need(esc not in out and "FAILED" in out, "run: NO_COLOR", out[-500:])
    for x in (d, d2):
        shutil.rmtree(x, ignore_errors=True)
    cleanup(r)


# ---------------------------------------------------------------------------------
# the installed tree
# ---------------------------------------------------------------------------------
@test
def t_install_tree_works():
    build = os.path.dirname(os.path.dirname(os.path.abspath(CUTRACE)))
    cmake = shutil.which("cmake")
    need(cmake and os.path.exists(os.path.join(build, "cmake_install.cmake")),
         "cmake and the build tree (%s)" % build)
    prefix = tempfile.mkdtemp(prefix="ct_inst_")
    p = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True, text=True,
                       timeout=120)
    need(p.returncode == 0, "cmake --install", p.stdout[-1000:], p.stderr[-1000:])
    ct = os.path.join(prefix, "bin", "cutrace")
    probe = os.path.join(prefix, "libexec", "cutrace", "cutrace-probe")
    shim = os.path.join(prefix, "lib", "cutrace", "libcutrace.so")
    for f in (ct, probe, shim):
        need(os.path.isfile(f), "installed: %s" % f, sorted(glob.glob(prefix + "/**", recursive=True)))
    # cutrace run of the installed probe under the rig, with the installed shim
    d = tempfile.mkdtemp(prefix="ct_it_")
    p = subprocess.run([ct, "run", "-o", d, "--", "sh", "-c", 'echo "LDP=$LD_PRELOAD"; exec %s' % probe],
                       env=rig_env(), capture_output=True, text=True, timeout=60)
    need(p.returncode == 0 and ": OK" in p.stderr, "installed run + probe", p.stdout, p.stderr)
    need(("LDP=%s:" % shim) in p.stdout, "the installed shim is preloaded", p.stdout)
    doc = show_json(d)
    procs = [x for x in doc["processes"] if (x["exe"] or "").endswith("cutrace-probe")]
    need(procs and first(procs[0], "cuInit")["result"] == 0, "the installed probe was traced", doc["summary"])
    # and cutrace probe finds the installed probe
    d2 = tempfile.mkdtemp(prefix="ct_it_")
    p = subprocess.run([ct, "probe", "-o", d2], env=rig_env(), capture_output=True, text=True, timeout=60)
    need(p.returncode == 0 and ": OK" in p.stdout, "installed cutrace probe", p.stdout[-1500:], p.stderr)
    for x in (d, d2, prefix):
        shutil.rmtree(x, ignore_errors=True)


@test
def t_run_output_dir_parents_made():
    """-o A/B/C makes the missing A/B the way mkdir -p does, the trace directory itself 0700;
    a path that cannot be made is one clear error."""
    base = tempfile.mkdtemp(prefix="ct_it_")
    d = os.path.join(base, "a", "b", "traces")
    p = subprocess.run([CUTRACE, "run", "-q", "-o", d, "--", PROBE], env=rig_env(), capture_output=True,
                       text=True, timeout=60)
    need(p.returncode == 0, "run into a new nested directory", p.stderr)
    need(glob.glob(os.path.join(d, "*.cutrace")), "the trace is there", os.listdir(d))
    need(os.stat(d).st_mode & 0o777 == 0o700, "trace directory 0700", oct(os.stat(d).st_mode))
    p = subprocess.run([CUTRACE, "run", "-o", "/proc/no-such/traces", "--", "true"], capture_output=True, text=True)
    need(p.returncode == 2 and p.stderr.count("\n") == 1 and "cannot create trace directory" in p.stderr,
         "one-line error", p.returncode, p.stderr)
    shutil.rmtree(base, ignore_errors=True)
