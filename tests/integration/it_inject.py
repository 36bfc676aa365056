# Fault injection, scenarios and replay: the grammar key by key, each action
# on each kind of call, --timeout, and replay round trips (of a hang, and of
# the traces recorded on the H200, tests/fixtures/h200-580) on the CPU rig.
# Loaded by itest.py, which provides test, need, Fail, cutrace_run,
# preload_run, rig_env, base_env, events, first, expect_verdict, cleanup ...
import gzip
import os
import re
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "h200-580")
RT_SHARED = os.path.join(PROGS, "rt_shared")
PROBE_LINKED = os.path.join(PROGS, "probe_linked")
RANK_VARS = ("RANK", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")

# ctypes programs (the way Python users and torch's early probes reach the libraries)
NVML_PY = r'''
import ctypes, sys
try:
    nv = ctypes.CDLL("libnvidia-ml.so.1")
except OSError as e:
    print("dlopen=error %s" % e)
    sys.exit(3)
r = nv.nvmlInit_v2()
print("nvmlInit_v2=%d" % r)
n = ctypes.c_uint(0)
rc = nv.nvmlDeviceGetCount_v2(ctypes.byref(n))
print("nvmlDeviceGetCount_v2=%d count=%d" % (rc, n.value if rc == 0 else 0))
sys.exit(0 if r == 0 else 1)
'''

CTX_PY = r'''
import ctypes, sys
cu = ctypes.CDLL("libcuda.so.1")
print("cuInit=%d" % cu.cuInit(0))
d = ctypes.c_int(-1)
print("cuDeviceGet=%d" % cu.cuDeviceGet(ctypes.byref(d), 0))
c = ctypes.c_void_p(0)
r = cu.cuCtxCreate_v2(ctypes.byref(c), 0, d)
print("cuCtxCreate=%d" % r)
for name, ver in ((b"cuInit", 2000), (b"cuDeviceGetCount", 2000)):
    f = cu.cuGetProcAddress_v2
    f.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                  ctypes.POINTER(ctypes.c_int)]
    p = ctypes.c_void_p(0x1234)
    st = ctypes.c_int(-1)
    r = f(name, ctypes.byref(p), ver, 0, ctypes.byref(st))
    print("gpa2 %s=%d pfn=%s status=%d" % (name.decode(), r, "null" if not p.value else "set", st.value))
    g = cu.cuGetProcAddress
    g.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64]
    p = ctypes.c_void_p(0x1234)
    r = g(name, ctypes.byref(p), ver, 0)
    print("gpa1 %s=%d pfn=%s" % (name.decode(), r, "null" if not p.value else "set"))
'''

CUDART_PY = r'''
import ctypes, sys
rt = ctypes.CDLL(sys.argv[1])
d = ctypes.c_int(-1)
print("cudaGetDevice=%d" % rt.cudaGetDevice(ctypes.byref(d)))
'''

_scripts = {}


def script(name, text):
    if name not in _scripts:
        d = tempfile.mkdtemp(prefix="ct_inj_py_")
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        _scripts[name] = path
    return _scripts[name]


def no_rank_env(env, **extra):
    for k in RANK_VARS:
        env.pop(k, None)
    env.update(extra)
    return env


def err_lines(p):
    text = p.err if hasattr(p, "err") else p.stderr
    return [l for l in text.splitlines() if l.strip()]


def cutrace(args, env=None, timeout=60):
    return subprocess.run([CUTRACE] + list(args), capture_output=True, text=True,
                          env=env if env is not None else base_env(), timeout=timeout)


def inj(e):
    return e.get("inject") or {}


def check_injected(p, call, action, **match):
    e = first(p, call, **match)
    need(e["injected"] and inj(e).get("action") == action,
         "%s should be marked injected (%s)" % (call, action), e)
    return e


# ---------------------------------------------------------------------------------
# value= on every call that reports a number
# ---------------------------------------------------------------------------------
@test
def t_inject_value_cudart_versions():
    base = cutrace_run([RT_SHARED], rig_env())
    need("cudaDriverGetVersion=0 version=13000" in base.out, "rig baseline", base.out)
    cleanup(base)
    r = cutrace_run([RT_SHARED], rig_env(),
                    inject=["cudaDriverGetVersion:value=11080", "cudaRuntimeGetVersion:value=12345"])
    need("cudaRuntimeGetVersion=0 version=12345" in r.out and "cudaDriverGetVersion=0 version=11080" in r.out,
         "value= on the runtime's version queries", r.out)
    p = r.proc("rt_shared")
    check_injected(p, "cudaRuntimeGetVersion", "value")
    check_injected(p, "cudaDriverGetVersion", "value")
    need(p["flags"]["inject"], "trace marked as injected")
    cleanup(r)


@test
def t_inject_value_nvml_count():
    prog = [PY, script("nvml_probe.py", NVML_PY)]
    base = cutrace_run(prog, rig_env())
    need("nvmlDeviceGetCount_v2=0 count=1" in base.out, "rig baseline", base.out, base.err)
    cleanup(base)
    r = cutrace_run(prog, rig_env(), inject=["nvmlDeviceGetCount:value=7"])
    need("nvmlDeviceGetCount_v2=0 count=7" in r.out, "value= on nvmlDeviceGetCount", r.out, r.err)
    e = check_injected(r.proc("python"), "nvmlDeviceGetCount_v2", "value")
    need(e["result"] == 0, "the real call ran", e)
    cleanup(r)


# ---------------------------------------------------------------------------------
# delay=: the enter record carries the mark, --timeout ends the hang
# ---------------------------------------------------------------------------------
@test
def t_inject_delay_marks_enter():
    t0 = time.time()
    r = cutrace_run([PROBE], rig_env(), inject=["cuInit:delay=1h"], extra=["--timeout", "1s"], timeout=60)
    need(r.rc == 137 and time.time() - t0 < 30, "--timeout 1s kills the held probe (137), got %d" % r.rc, r.err)
    need("timeout" in r.err and "killed" in r.err, "run says it killed the program", r.err)
    p = r.proc("cutrace-probe")
    ci = first(p, "cuInit")
    need(not ci["returned"], "cuInit never returned", ci)
    need(ci["injected"] and inj(ci).get("action") == "delay", "the enter of the held cuInit is marked", ci)
    v = expect_verdict(p, "driver-api", "cuInit", injected=True)
    need(v["hung"], "hung verdict", v)
    cleanup(r)


@test
def t_inject_delay_open_dlopen_dlsym():
    for rule, call, match in [("open:path=/dev/nvidiactl:delay=300ms:when=1", "open", {"target": "/dev/nvidiactl"}),
                              ("dlopen:lib=libcuda.so.1:delay=300ms", "dlopen", {"target": "libcuda.so.1"}),
                              ("dlsym:sym=cuInit:delay=300ms", "dlsym", {"target_has": "cuInit"})]:
        r = cutrace_run([PROBE], rig_env(), inject=[rule])
        need(r.rc == 0 and "cuInit(0) = 0" in r.out, "a delay only delays: " + rule, r.out, r.err)
        p = r.proc("cutrace-probe")
        if call == "open":
            es = [e for e in p["events"] if e["call"].startswith("open") and e["target"] == "/dev/nvidiactl"]
            need(es, "no open of nvidiactl")
            e = es[0]
        else:
            e = first(p, call, **match)
        need(e["injected"] and inj(e).get("action") == "delay", "%s marked injected (delay)" % rule, e)
        need(e["dur_ns"] is not None and 300e6 <= e["dur_ns"] < 10e9, "%s: duration %r" % (rule, e["dur_ns"]))
        others = [x for x in p["events"] if x["injected"] and x["seq"] != e["seq"]]
        need(not others, "only the matching call is held: " + rule, [(x["call"], x["target"]) for x in others])
        cleanup(r)


@test
def t_run_timeout_kills_tree():
    d = tempfile.mkdtemp(prefix="ct_inj_")
    pidf = os.path.join(d, "pids")
    # a background child, an orphaned grandchild (its parent exits at once), and the shell
    sh = "sleep 300 & echo $! >> %s; (sleep 300 & echo $! >> %s); echo $$ >> %s; sleep 300" % (pidf, pidf, pidf)
    t0 = time.time()
    r = cutrace_run(["sh", "-c", sh], base_env(), extra=["--timeout", "700ms"], timeout=60)
    need(r.rc == 137, "status 137 after --timeout, got %d" % r.rc, r.err)
    need(time.time() - t0 < 20, "took %.1fs" % (time.time() - t0))
    need(len(err_lines(r)) >= 1 and "ran longer than 700ms" in r.err, "timeout message", r.err)
    pids = [int(x) for x in open(pidf).read().split()]
    need(len(pids) == 3, "3 processes of the tree", pids)
    alive = []
    for _ in range(50):
        alive = []
        for pid in pids:
            try:
                with open("/proc/%d/stat" % pid) as f:
                    if f.read().split(")")[-1].split()[0] != "Z":
                        alive.append(pid)
            except OSError:
                pass
        if not alive:
            break
        time.sleep(0.1)
    need(not alive, "processes of the tree still run after --timeout", alive)
    # without --timeout nothing is killed: a quick program just runs
    r2 = cutrace_run(["sh", "-c", "exit 3"], base_env(), extra=["--timeout", "30s"])
    need(r2.rc == 3 and "timeout" not in r2.err, "a program that ends in time keeps its status", r2.rc, r2.err)
    shutil.rmtree(d, ignore_errors=True)
    cleanup(r)
    cleanup(r2)


# ---------------------------------------------------------------------------------
# the grammar: match keys
# ---------------------------------------------------------------------------------
@test
def t_inject_dev_key():
    r = cutrace_run([PROBE], rig_env(), inject=["open:dev=nvidia-uvm:error=EPERM"])
    need("cuInit(0) = 999" in r.out, "open:dev=nvidia-uvm fails the uvm node (999)", r.out)
    p = r.proc()
    e = [x for x in p["events"] if x["call"].startswith("open") and x["injected"]]
    need(e and all(x["target"] == "/dev/nvidia-uvm" for x in e), "only nvidia-uvm opens injected",
         [(x["target"]) for x in e])
    cleanup(r)
    r = cutrace_run([PROBE], rig_env(), inject=["ioctl:dev=nvidia-uvm:error=EPERM:when=1"])
    need("cuInit(0) = 999" in r.out, "first ioctl on nvidia-uvm fails: 999", r.out)
    e = [x for x in events(r.proc(), "ioctl") if x["injected"]]
    need(len(e) == 1 and e[0]["name"] == "UVM_INITIALIZE", "the first UVM ioctl is the injected one",
         [(x["name"]) for x in e])
    cleanup(r)
    # dev= narrows: UVM_REGISTER_GPU is never issued on nvidia0
    r = cutrace_run([PROBE], rig_env(), inject=["ioctl:dev=nvidia0:nr=UVM_REGISTER_GPU:error=EIO"])
    need("cuInit(0) = 0" in r.out and not any(x["injected"] for x in r.proc()["events"]),
         "dev=nvidia0 must not match an nvidia-uvm ioctl", r.out)
    cleanup(r)


@test
def t_inject_nr_by_number():
    for nr in ("0x25", "37", "UVM_REGISTER_GPU"):
        r = cutrace_run([PROBE], rig_env(), inject=["ioctl:nr=%s:error=EIO" % nr])
        need("cuInit(0) = 3" in r.out, "nr=%s: UVM_REGISTER_GPU fails, cuInit 3" % nr, r.out)
        e = [x for x in events(r.proc(), "ioctl") if x["injected"]]
        need(e and all(x["name"] == "UVM_REGISTER_GPU" for x in e), "nr=%s hits UVM_REGISTER_GPU only" % nr,
             [x["name"] for x in e])
        cleanup(r)
    # an RM escape by number: 0x2b (43) is NV_ESC_RM_ALLOC on nvidiactl; libcuda retries
    # a failed first RM_ALLOC (measured on the H200: cuInit 0)
    for nr in ("0x2b", "43"):
        r = cutrace_run([PROBE], rig_env(), inject=["ioctl:nr=%s:error=EINVAL:when=1" % nr])
        e = [x for x in events(r.proc(), "ioctl") if x["injected"]]
        need(len(e) == 1 and "RM_ALLOC" in e[0]["name"] and e[0]["errno_name"] == "EINVAL",
             "nr=%s is RM_ALLOC" % nr, [(x["name"], x["errno_name"]) for x in e])
        cleanup(r)


@test
def t_inject_rank_variables():
    for var in ("LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"):
        for rank, want in (("3", True), ("1", False)):
            env = no_rank_env(rig_env(CUTRACE_INJECT="open:path=/dev/nvidiactl:error=EPERM:rank=3"), **{var: rank})
            r = preload_run([PROBE], env)
            failed = "cuInit(0) = 100" in r.out
            need(failed == want, "rank=3 with %s=%s: failed=%s" % (var, rank, failed), r.out, r.err)
            need(any(e["injected"] for e in r.proc()["events"]) == want, "injected mark with %s=%s" % (var, rank))
            cleanup(r)
    # no rank variable at all: a rank= rule is off
    r = preload_run([PROBE], no_rank_env(rig_env(CUTRACE_INJECT="open:path=/dev/nvidiactl:error=EPERM:rank=0")))
    need("cuInit(0) = 0" in r.out, "rank=0 without any rank variable must not act", r.out)
    cleanup(r)


@test
def t_inject_when_n_plus():
    r = cutrace_run([PROBE], rig_env(), inject=["open:path=/dev/nvidia-uvm:error=EPERM:when=2+"])
    opens = [e for e in r.proc()["events"] if e["call"].startswith("open") and e["target"] == "/dev/nvidia-uvm"]
    need(len(opens) >= 2, "libcuda opens nvidia-uvm more than once", len(opens))
    need(opens[0]["ok"] and not opens[0]["injected"], "when=2+: the first open is left alone", opens[0])
    need(all(not e["ok"] and e["injected"] for e in opens[1:]), "when=2+: every later open fails",
         [(e["ok"], e["injected"]) for e in opens])
    cleanup(r)


@test
def t_inject_sym_cugetprocaddress():
    # the real libcudart 13.0 (on the rig): cuInit not found through cuGetProcAddress -> 36
    r = cutrace_run([RT_SHARED], rig_env(), inject=["cuGetProcAddress:sym=cuInit:retval=CUDA_ERROR_NOT_FOUND"])
    need("cudaGetDeviceCount=36" in r.out, "real cudart without cuInit: 36 (cudaErrorCallRequiresNewerDriver)",
         r.out)
    p = r.proc("rt_shared")
    hit = [e for e in p["events"] if e["call"].startswith("cuGetProcAddress") and e["injected"]]
    need(hit and all(e["target"] == "cuInit" and e["result"] == 500 for e in hit), "only cuInit look-ups injected",
         [(e["target"], e["result"]) for e in hit])
    need(not any(e["call"] == "cuInit" for e in p["events"]), "cudart never got a cuInit to call")
    cleanup(r)
    # an injected failure hands out no function, like the driver's own: *pfn NULL, status not-found
    prog = [PY, script("ctx_probe.py", CTX_PY)]
    r = cutrace_run(prog, rig_env(), inject=["cuGetProcAddress:sym=cuInit:retval=CUDA_ERROR_NOT_FOUND"])
    need("gpa2 cuInit=500 pfn=null status=1" in r.out and "gpa1 cuInit=500 pfn=null" in r.out,
         "injected cuGetProcAddress failure sets *pfn NULL (and status 1)", r.out, r.err)
    need("gpa2 cuDeviceGetCount=0 pfn=set status=0" in r.out, "sym= leaves other names alone", r.out)
    cleanup(r)


# ---------------------------------------------------------------------------------
# the actions on more calls
# ---------------------------------------------------------------------------------
@test
def t_inject_retval_runtime():
    r = cutrace_run([RT_SHARED], rig_env(), inject=["cudaGetDeviceCount:retval=cudaErrorNoDevice",
                                                     "cudaSetDevice:retval=101"])
    need("cudaGetDeviceCount=100" in r.out and "cudaSetDevice=101" in r.out, "retval= on runtime calls", r.out)
    p = r.proc("rt_shared")
    check_injected(p, "cudaGetDeviceCount", "retval")
    check_injected(p, "cudaSetDevice", "retval")
    expect_verdict(p, "driver-api", None, 100, injected=True)
    cleanup(r)


@test
def t_inject_more_calls():
    cases = [
        ([PROBE_LINKED], "cuDeviceGetName:retval=CUDA_ERROR_INVALID_DEVICE", "cuDeviceGetName=101",
         "cuDeviceGetName"),
        ([PROBE_LINKED, "--ctx"], "cuCtxSetCurrent:retval=CUDA_ERROR_INVALID_CONTEXT", "cuCtxSetCurrent=201",
         "cuCtxSetCurrent"),
        ([PY, script("ctx_probe.py", CTX_PY)], "cuCtxCreate:retval=CUDA_ERROR_OUT_OF_MEMORY", "cuCtxCreate=2",
         "cuCtxCreate_v2"),
        ([PY, script("nvml_probe.py", NVML_PY)], "nvmlDeviceGetCount:retval=NVML_ERROR_UNKNOWN",
         "nvmlDeviceGetCount_v2=999", "nvmlDeviceGetCount_v2"),
    ]
    cudart = os.path.join(os.environ.get("CUDA_HOME_FOR_TESTS", "/usr/local/cuda"), "lib64", "libcudart.so.13")
    if os.path.exists(cudart):
        cases.append(([PY, script("cudart_probe.py", CUDART_PY), cudart], "cudaGetDevice:retval=cudaErrorNoDevice",
                      "cudaGetDevice=100", "cudaGetDevice"))
    for argv, rule, out, call in cases:
        base = cutrace_run(argv, rig_env())
        need(out not in base.out, "baseline already prints %r" % out, base.out, base.err)
        cleanup(base)
        r = cutrace_run(argv, rig_env(), inject=[rule])
        need(out in r.out, "rule %r: want %r" % (rule, out), r.out, r.err)
        check_injected(r.proc(), call, "retval")
        cleanup(r)


# ---------------------------------------------------------------------------------
# bad rules, bad usage
# ---------------------------------------------------------------------------------
BAD_RULES = [
    ("cuInit:dev=nvidiactl:retval=1", "dev= applies to ioctl and open"),
    ("open:lib=libcuda.so:error=ENOENT", "lib= applies to dlopen"),
    ("dlopen:path=/dev/x:error=ENOENT", "path= applies to open"),
    ("cuInit:sym=cuInit:retval=1", "sym= applies to cuGetProcAddress and dlsym"),
    ("open:path=/dev/x:error=EIO:error=EPERM", "only one of"),
    ("cuDriverGetVersion:retval=1:value=2", "only one of"),
    ("open:path=/dev/nvidiactl", "has no action"),
    ("cuInit:value=3", "value= applies to"),
    ("open:path=/x:value=3", "value= applies to"),
    ("ioctl:nr=UVM_INITIALIZE:value=1", "value= on ioctl needs cmd="),
    ("open:path=/x:version=1.2.3", "version= applies to ioctl"),
    ("cuInit:retval=CUDA_ERROR_BOGUS", "unknown CUresult code 'CUDA_ERROR_BOGUS'"),
    ("cudaGetDeviceCount:retval=cudaErrorBogus", "unknown cudaError code 'cudaErrorBogus'"),
    ("nvmlInit:retval=NVML_ERROR_BOGUS", "unknown NVML return code 'NVML_ERROR_BOGUS'"),
    ("ioctl:status=NV_ERR_BOGUS", "unknown NV_STATUS 'NV_ERR_BOGUS'"),
    ("open:path=/x:error=EPERM:rank=-1", "rank=-1"),
    ("open:path=/x:error=EPERM:when=3..2", "when=3..2"),
    ("cuInit:retval=1::", "empty KEY=VALUE"),
    ("cuInit::retval=1", "empty KEY=VALUE"),
    ("cuInit:retval=1:when=0x2", "when=0x2"),
    ("cuInit:retval=-5", "retval=-5"),
    ("cuInit:delay=1.s", "delay=1.s"),
]


@test
def t_inject_bad_rules():
    for rule, frag in BAD_RULES:
        p = cutrace(["run", "--inject", rule, "--", "sh", "-c", "echo STARTED"])
        need(p.returncode == 2, "%r should exit 2, got %d" % (rule, p.returncode), p.stderr)
        need(frag in p.stderr and ("'%s'" % rule) in p.stderr, "%r: message lacks %r" % (rule, frag), p.stderr)
        need("STARTED" not in p.stdout, "%r: the program must not start" % rule)
        err = [l for l in p.stderr.splitlines() if l.strip()]
        need(len(err) == 1 and "--help-inject" in err[0],
             "%r: one line that points at --help-inject" % rule, p.stderr)
    # an empty --inject is a usage error
    p = cutrace(["run", "--inject", "", "--", "true"])
    need(p.returncode == 2 and "--inject needs a rule" in p.stderr, "--inject ''", p.stderr)
    # the shim (same parser) warns once and injects nothing
    r = preload_run([PROBE], rig_env(CUTRACE_INJECT="cuInit:retval=1::"))
    lines = [l for l in r.err.splitlines() if l.startswith("cutrace")]
    need(len(lines) == 1 and "empty KEY=VALUE" in lines[0], "one shim warning", r.err)
    need("cuInit(0) = 0" in r.out, "nothing injected", r.out)
    cleanup(r)


@test
def t_inject_inherited_env():
    p = subprocess.run([CUTRACE, "run", "-o", tempfile.mkdtemp(prefix="ct_it_"), "--", "sh", "-c", "echo STARTED"],
                       env=base_env(CUTRACE_INJECT="bad"), capture_output=True, text=True)
    need(p.returncode == 2 and "CUTRACE_INJECT" in p.stderr and "unknown call 'bad'" in p.stderr,
         "a bad inherited CUTRACE_INJECT is rejected by run", p.returncode, p.stderr)
    need("STARTED" not in p.stdout, "the program must not start")
    # both kept: the inherited rules and --inject
    r = cutrace_run([PROBE], rig_env(CUTRACE_INJECT="cuDeviceGetCount:value=5"),
                    inject=["cuDriverGetVersion:value=12345"])
    need("count 5" in r.out and "12345" in r.out, "inherited and --inject rules both act", r.out, r.err)
    rules = r.proc()["inject_rules"] or ""
    need("cuDeviceGetCount:value=5" in rules and "cuDriverGetVersion:value=12345" in rules, "recorded rules", rules)
    cleanup(r)


@test
def t_inject_rules_parser_no_malloc():
    """The common room (rule grammar, parsers, ring) runs in the shim's constructor
    too: no allocation, no stdio streams."""
    common = os.path.join(HERE, "..", "..", "common")
    for name in ("inject_rules.c", "parse.c", "ring.c"):
        with open(os.path.join(common, name)) as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        bad = re.findall(r"\b(malloc|calloc|realloc|strdup|strndup|asprintf|vasprintf|fopen|printf|fprintf|"
                         r"getenv|setlocale)\s*\(", text)
        need(not bad, "common/%s calls %s" % (name, sorted(set(bad))))


@test
def t_size_one_parser():
    """--size and CUTRACE_SIZE are read by one parser (common/parse.c): what the CLI
    accepts is the size the shim writes, and a size the shim cannot honour is refused."""
    def one_size(d):
        files = [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs if f.endswith(".cutrace")]
        need(len(files) == 1, "one trace in %s" % d, files)
        return os.path.getsize(files[0])
    for arg, size in (("4MiB", 4 << 20), ("4M", 4 << 20), ("2mb", 2 << 20), ("1048576", 1 << 20), ("1G", 1 << 30)):
        r = cutrace_run([PROBE], rig_env(), extra=["--size", arg])
        need(r.rc == 0, "--size %s: the probe runs" % arg, r.err)
        need(one_size(r.dir) == size, "--size %s writes %d bytes, not %d" % (arg, size, one_size(r.dir)))
        cleanup(r)
    r = preload_run([PROBE], rig_env(CUTRACE_SIZE="4MiB"))
    need(one_size(r.dir) == 4 << 20, "CUTRACE_SIZE=4MiB: 4 MiB, not %d" % one_size(r.dir))
    cleanup(r)
    for arg, frag in (("2G", "more than 1024M"), ("1025M", "more than 1024M"), ("255K", "at least 256K"),
                      ("4Mi", "at least 256K"), ("4096B", "at least 256K")):
        p = cutrace(["run", "--size", arg, "--", "true"])
        lines = err_lines(p)
        need(p.returncode == 2 and len(lines) == 1 and ("--size '%s'" % arg) in lines[0] and frag in lines[0],
             "--size %s is refused with one line saying %r" % (arg, frag), p.returncode, p.stderr)


@test
def t_usage_errors_one_line():
    for args, frag, cmd in [(["run", "--frob", "--", "true"], "unknown option '--frob'", "run"),
                            (["run", "--inject"], "--inject needs a value", "run"),
                            (["run", "--size", "1", "--", "true"], "--size '1'", "run"),
                            (["run", "--timeout", "soon", "--", "true"], "--timeout 'soon'", "run"),
                            (["replay", "--frob"], "unknown option '--frob'", "replay"),
                            (["replay"], "needs a trace", "replay")]:
        p = cutrace(args)
        lines = err_lines(p)
        need(p.returncode == 2, "%r exits 2, got %d" % (args, p.returncode), p.stderr)
        need(len(lines) == 1, "%r: one line, not the whole usage" % args, p.stderr)
        need(frag in lines[0] and "(try 'cutrace %s --help')" % cmd in lines[0], "%r: %r" % (args, frag), lines)


# ---------------------------------------------------------------------------------
# replay: its command line, scenario names, a hang, the fake's kernel-version table
# ---------------------------------------------------------------------------------
@test
def t_replay_options_after_trace():
    r = cutrace_run([PROBE], rig_env(FAKENV_DENY="/dev/nvidia-uvm=EPERM"))
    a = cutrace(["replay", r.dir, "--print"])
    b = cutrace(["replay", "--print", r.dir])
    need(a.returncode == 0 and "rules:    open:path=/dev/nvidia-uvm:error=EPERM" in a.stdout,
         "replay TRACE --print", a.stdout, a.stderr)
    need(a.stdout == b.stdout, "options before and after TRACE are the same", a.stdout, b.stdout)
    d2 = tempfile.mkdtemp(prefix="ct_rp_")
    p = cutrace(["replay", r.dir, "-o", d2, "--timeout", "30s", "--", PROBE], env=rig_env())
    need(p.returncode == 0 and "replay: reproduced" in p.stdout and d2 in p.stdout, "options after TRACE act",
         p.stdout, p.stderr)
    need("timeout:  30s" in p.stdout, "--timeout is shown", p.stdout)
    need(any(f.endswith(".cutrace") for f in os.listdir(d2)), "-o after TRACE: traces in it")
    # a missing trace is named, before the missing command
    p = cutrace(["replay", "/nonexistent/x.cutrace"])
    need(p.returncode == 2 and len(err_lines(p)) == 1 and "/nonexistent/x.cutrace" in p.stderr
         and "No such file" in p.stderr, "replay of a missing file", p.stderr)
    shutil.rmtree(d2, ignore_errors=True)
    cleanup(r)


@test
def t_scenario_name_in_trace():
    for name in ("no-visible-device", "ctl-denied"):
        r = cutrace_run([PROBE], rig_env(), scenario=name)
        p = r.proc("cutrace-probe")
        need(p["env"].get("CUTRACE_SCENARIO") == name, "scenario %s recorded in the trace" % name, p["env"])
        pr = cutrace(["replay", r.dir, "--print"])
        need(pr.returncode == 0 and "recorded with: --scenario %s" % name in pr.stdout,
             "replay names the recorded scenario", pr.stdout, pr.stderr)
        cleanup(r)
    r = cutrace_run([PROBE], rig_env())
    need("CUTRACE_SCENARIO" not in r.proc()["env"], "no scenario, no name")
    need(r.proc()["verdict"]["scenario"] is None, "no scenario in the verdict")
    cleanup(r)


@test
def t_scenario_without_rule_says_injected():
    # these two change the environment (no rule fires): the verdict still
    # says the failure was made by cutrace, and by which scenario
    for name, env, layer in (("no-visible-device", rig_env(), "driver-api"),
                             ("stub-library", rig_env(), "loader")):
        r = cutrace_run([PROBE], env, scenario=name)
        v = expect_verdict(r.proc("cutrace-probe"), layer, injected=True)
        need(v["scenario"] == name, "verdict names the scenario", v)
        txt = subprocess.run([CUTRACE, "show", r.dir], capture_output=True, text=True).stdout
        need("the failure was injected by cutrace (scenario %s)" % name in txt, "text says so", txt[-2000:])
        cleanup(r)


@test
def t_replay_hang_in_cuinit():
    r = cutrace_run([PROBE], rig_env(), scenario="hang-in-cuinit", extra=["--timeout", "1s"], timeout=60)
    need(r.rc == 137, "the held probe is killed by --timeout", r.rc, r.err)
    v = expect_verdict(r.proc("cutrace-probe"), "uvm", "ioctl", injected=True)
    need(v["hung"], "hung verdict", v)
    pr = cutrace(["replay", r.dir, "--print"])
    need(pr.returncode == 0 and "ioctl:nr=UVM_REGISTER_GPU:delay=1h" in pr.stdout, "hang rule", pr.stdout)
    need("timeout:  20s" in pr.stdout, "a recorded hang is replayed under a default timeout", pr.stdout)
    d2 = tempfile.mkdtemp(prefix="ct_rp_")
    t0 = time.time()
    rp = cutrace(["replay", "-o", d2, r.dir, "--timeout", "1s", "--", PROBE], env=rig_env(), timeout=60)
    need(rp.returncode == 0 and "replay: reproduced by injection (layer uvm, step ioctl" in rp.stdout,
         "replay of a hang reproduced", rp.stdout, rp.stderr)
    need(time.time() - t0 < 15, "replay of a hang does not block (%.1fs)" % (time.time() - t0))
    shutil.rmtree(d2, ignore_errors=True)
    cleanup(r)


@test
def t_fake_kernel_version_table():
    """The fake libcuda answers kernel versions as the real 580.159.04 did on the H200
    (tests/fixtures/h200-580/README.md, GPU run 2)."""
    for ver, code in (("580.159.04", 0), ("580.95.05", 0), ("580.159.05", 0), ("580.173.02", 803),
                      ("590.48.01", 803), ("575.51.02", 101)):
        p = subprocess.run([PROBE], env=rig_env(FAKENV_KERNEL_VERSION=ver), capture_output=True, text=True)
        need("cuInit(0) = %d " % code in p.stdout, "kernel %s: want cuInit %d" % (ver, code), p.stdout)


def driver_layout(version="580.159.04"):
    """The rig's libraries installed the way the driver installs them:
    libcuda.so.1 -> libcuda.so.<version> (the verdict reads the user-mode
    driver's version from that name, as on the H200)."""
    d = tempfile.mkdtemp(prefix="ct_lay_")
    for lib in ("libcuda", "libnvidia-ml"):
        shutil.copy(os.path.join(FAKECUDA, lib + ".so.1"), os.path.join(d, "%s.so.%s" % (lib, version)))
        os.symlink("%s.so.%s" % (lib, version), os.path.join(d, lib + ".so.1"))
        os.symlink(lib + ".so.1", os.path.join(d, lib + ".so"))
    return d


@test
def t_scenario_version_skew_803():
    lay = driver_layout()
    r = cutrace_run([PROBE], base_env(LD_LIBRARY_PATH=lay, LD_PRELOAD=FAKENV), scenario="version-skew")
    need("cuInit(0) = 803" in r.out, "version-skew gives the field's 803", r.out)
    expect_verdict(r.proc(), "kernel-handshake", "ioctl", 803, "590.48.01", injected=True)
    cleanup(r)
    shutil.rmtree(lay, ignore_errors=True)


# ---------------------------------------------------------------------------------
# the traces recorded on the H200, replayed on the rig
# ---------------------------------------------------------------------------------
def replay_fixture(name, argv, version="580.159.04", extra_env=None, timeout=60, args=()):
    lay = driver_layout(version)
    d = tempfile.mkdtemp(prefix="ct_fx_")
    trace = os.path.join(d, name + ".cutrace")
    with gzip.open(os.path.join(FIXTURES, name + ".cutrace.gz")) as src, open(trace, "wb") as dst:
        shutil.copyfileobj(src, dst)
    env = base_env(LD_LIBRARY_PATH=lay, LD_PRELOAD=FAKENV, **(extra_env or {}))
    out = os.path.join(d, "out")
    p = cutrace(["replay", "-o", out] + list(args) + [trace, "--"] + argv, env=env, timeout=timeout)
    shutil.rmtree(lay, ignore_errors=True)
    shutil.rmtree(d, ignore_errors=True)
    return p


def check_fixtures(cases):
    bad = []
    for name, argv, kw in cases:
        p = replay_fixture(name, argv, **kw)
        if p.returncode != 0 or "replay: reproduced" not in p.stdout:
            bad.append("%s: rc %d\n%s%s" % (name, p.returncode, p.stdout, p.stderr))
    need(not bad, "not reproduced:\n" + "\n".join(bad))


@test
def t_replay_h200_probe():
    check_fixtures([(n, [PROBE], {}) for n in ("i01", "i02", "i03", "i04", "i05", "i06", "i07", "i08", "i11")] +
                   [("busy-ctx", [PROBE, "--ctx"], {}),
                    # a cuda-compat libcuda 580.95.05 on the 580.159.04 module: the rig's libcuda
                    # plays that compat copy
                    ("c1", [PROBE], {"version": "580.95.05", "extra_env": {"FAKECUDA_VERSION": "580.95.05"}})])


@test
def t_replay_h200_cudart():
    # torch's traces (t1-t4) are replayed with the cudart program: same failing call, same code
    check_fixtures([(n, [RT_SHARED], {}) for n in ("i14", "i15", "i19", "t1", "t2", "t3", "t4")])


@test
def t_replay_h200_nvml():
    check_fixtures([("i16", [PY, script("nvml_probe.py", NVML_PY)], {})])


@test
def t_replay_h200_hang_torch():
    """hang-torch never returned from cudaGetDeviceCount: replay holds the same
    call and ends it with the default timeout (20s)."""
    t0 = time.time()
    p = replay_fixture("hang-torch", [RT_SHARED], timeout=90)
    need(p.returncode == 0 and "replay: reproduced" in p.stdout and "timeout:  20s" in p.stdout,
         "hang-torch replay", p.stdout, p.stderr)
    need(15 < time.time() - t0 < 80, "the default timeout ended it (%.1fs)" % (time.time() - t0))


@test
def t_replay_h200_hang_uvm():
    """hang-uvm (scenario hang-in-cuinit under torch, GPU run 3) holds the
    enter of the UVM_REGISTER_GPU that never returned: replay holds that
    ioctl, not only the runtime call around it."""
    p = replay_fixture("hang-uvm", [RT_SHARED], timeout=60, args=["--timeout", "3s"])
    need(p.returncode == 0 and "replay: reproduced" in p.stdout, "hang-uvm replay", p.stdout, p.stderr)
    need("ioctl:nr=UVM_REGISTER_GPU" in p.stdout and "delay=" in p.stdout, "the held ioctl is the rule", p.stdout)


# ---------------------------------------------------------------------------------
# "injected" only when a rule fired on the root step or upstream of it (issue 16)
# ---------------------------------------------------------------------------------
def show_text(d):
    return subprocess.run([CUTRACE, "show", "--color=never", d], capture_output=True, text=True).stdout


@test
def t_injected_only_when_a_rule_fired():
    # a scenario whose rule never fires (libcuda stops at the missing control
    # node, before it would open /dev/nvidia0): a real failure, said so
    r = cutrace_run([PROBE], rig_env(FAKENV_MISSING="/dev/nvidiactl"), scenario="gpu-denied")
    p = r.proc("cutrace-probe")
    v = expect_verdict(p, "device-node", "open", 100, injected=False)
    need(not any(e["injected"] for e in p["events"]), "no rule fired", v)
    need(v["scenario"] == "gpu-denied" and "none of its rules fired" in (v["notes"] or ""), "notes say so", v)
    txt = show_text(r.dir)
    need("(injected)" not in txt and "the failure was injected" not in txt, "no injected mark", txt[-2000:])
    need("a real failure: no rule of scenario gpu-denied fired on it or before it" in txt, "text says real",
         txt[-2000:])
    cleanup(r)
    # an environment scenario whose change is not the cause: no-visible-device
    # where the control node is missing is still the node's failure
    r = cutrace_run([PROBE], rig_env(FAKENV_MISSING="/dev/nvidiactl"), scenario="no-visible-device")
    v = verdict(r.proc("cutrace-probe"))
    if v["layer"] == "device-node":
        need(not v["injected"], "no-visible-device over a missing node: real", v)
    cleanup(r)
    # a delay= rule that held the failing open and changed nothing: real
    r = cutrace_run([PROBE], rig_env(FAKENV_DENY="/dev/nvidiactl=EPERM"),
                    inject=["open:path=/dev/nvidiactl:delay=20ms"])
    p = r.proc("cutrace-probe")
    v = expect_verdict(p, "device-node", "open", 100, injected=False)
    need(v["step"]["injected"], "the step carries the delay's mark", v)
    need("changed nothing this failure depends on" in (v["notes"] or ""), "notes name the delay", v)
    need("(injected)" not in r.err, "run's verdict line is not marked injected", r.err)
    cleanup(r)
    # a rule that fired upstream (a value) of a real-looking failure: injected
    r = cutrace_run([RT_SHARED], rig_env(), inject=["cuDriverGetVersion:value=12040"])
    v = expect_verdict(r.proc("rt_shared"), "runtime", injected=True)
    cleanup(r)
    # a rule on the root step itself: injected
    r = cutrace_run([PROBE], rig_env(), inject=["open:path=/dev/nvidia0:error=EPERM"])
    v = expect_verdict(r.proc("cutrace-probe"), "device-node", "open", 100, injected=True)
    need("(injected)" in r.err, "run's verdict line says injected", r.err)
    cleanup(r)


@test
def t_replay_real_failure_is_not_reproduced_by_injection():
    rec = cutrace_run([PROBE], rig_env(), inject=["open:path=/dev/nvidia0:error=EPERM"])
    expect_verdict(rec.proc("cutrace-probe"), "device-node", "open", 100, injected=True)
    # replayed on a healthy rig: the rule fires
    d2 = tempfile.mkdtemp(prefix="ct_rp_")
    p = cutrace(["replay", "-o", d2, rec.dir, "--", PROBE], env=rig_env())
    need(p.returncode == 0 and "replay: reproduced by injection (layer device-node, step open" in p.stdout,
         "replay by injection", p.stdout, p.stderr)
    shutil.rmtree(d2, ignore_errors=True)
    # replayed where the control node is denied for real: the same kind of
    # failure, but the nvidia0 rule never fires
    d2 = tempfile.mkdtemp(prefix="ct_rp_")
    p = cutrace(["replay", "-o", d2, rec.dir, "--", PROBE], env=rig_env(FAKENV_DENY="/dev/nvidiactl=EPERM"))
    need(p.returncode == 3 and "replay: failed here for a real reason, not by injection" in p.stdout
         and "reproduced by injection" not in p.stdout, "replay of a real failure", p.stdout, p.stderr)
    shutil.rmtree(d2, ignore_errors=True)
    # replayed where the failure is real and different: not reproduced, and said to be real
    d2 = tempfile.mkdtemp(prefix="ct_rp_")
    p = cutrace(["replay", "-o", d2, rec.dir, "--", PROBE], env=rig_env(FAKENV_MISSING="/dev/nvidia-uvm"))
    if p.returncode == 1:
        need("NOT reproduced" in p.stdout, "not reproduced", p.stdout)
    shutil.rmtree(d2, ignore_errors=True)
    cleanup(rec)
