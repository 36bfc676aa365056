# The CLI tells the truth about a run (issue 17): bounded waits in probe and
# doctor, how each process ended, one verdict block per process, stable
# output.  Loaded by itest.py, which provides test, need, Fail, cutrace_run,
# rig_env, base_env, expect_verdict, cleanup ...
import json
import re
import os
import shutil
import subprocess
import tempfile
import time


def ct(args, env=None, timeout=60):
    return subprocess.run([CUTRACE] + list(args), capture_output=True, text=True,
                          env=env if env is not None else rig_env(), timeout=timeout)


HANG = dict(FAKENV_HANG_CMD="37", FAKENV_HANG_SEC="30")  # UVM_REGISTER_GPU held 30 s


# ---------------------------------------------------------------------------------
# bounded waits: probe and doctor
# ---------------------------------------------------------------------------------
@test
def t_probe_timeout_is_a_finding():
    d = tempfile.mkdtemp(prefix="ct_it_")
    t0 = time.time()
    p = ct(["probe", "-o", d, "--timeout", "1s"], env=rig_env(**HANG))
    took = time.time() - t0
    need(p.returncode == 1, "a probe that did not finish exits 1, got %d" % p.returncode, p.stdout, p.stderr)
    need(took < 25, "the probe was held %.1f s past its 1 s limit" % took)
    out = p.stdout
    need("cuInit(flags=0x0) did not return within 1 s" in out, "says cuInit did not return within 1 s", out)
    need("it was inside ioctl(nvidia-uvm, UVM_REGISTER_GPU)" in out, "names the call it was inside", out)
    need(" OK " not in out, "never OK", out)
    h = ct(["probe", "--help"])
    need("--timeout DURATION" in h.stdout and "default 60s" in h.stdout, "probe --help documents --timeout", h.stdout)
    shutil.rmtree(d, ignore_errors=True)


@test
def t_doctor_timeout():
    h = ct(["doctor", "--help"])
    need(h.returncode == 0 and "--timeout DURATION" in h.stdout and "default 60s" in h.stdout,
         "doctor --help documents --timeout", h.stdout)
    p = ct(["doctor", "--timeout", "soon"])
    need(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "'soon'" in p.stderr,
         "a bad --timeout is one line, exit 2", p.returncode, p.stderr)
    t0 = time.time()
    p = ct(["doctor", "--json", "--timeout", "1s"], env=rig_env(**HANG))
    need(time.time() - t0 < 25, "doctor waited for the held probe")
    need(p.returncode == 1, "doctor with a hung probe exits 1, got %d" % p.returncode, p.stderr)
    doc = json.loads(p.stdout)
    pr = doc["probe"]
    need(pr["status"] == "timed out" and pr["timeout"] == "1 s", "probe status 'timed out'", pr)
    need(doc["verdict"]["probe"] == "timed out", "the verdict's probe status", doc["verdict"])
    need("did not return within 1 s" in pr["verdict"]["summary"] and pr["verdict"]["end"]["kind"] == "timeout",
         "the probe's verdict says what it was inside", pr["verdict"])
    p = ct(["doctor", "--timeout=1s"], env=rig_env(**HANG))
    need("cuInit(flags=0x0) did not return within 1 s" in p.stdout and "UVM_REGISTER_GPU" in p.stdout,
         "doctor's text names the held call", p.stdout)


@test
def t_slow_call_is_reported():
    # a cuInit that took a second and a half, then worked: OK, with its time
    env = rig_env(FAKENV_HANG_CMD="37", FAKENV_HANG_SEC="1")
    d = tempfile.mkdtemp(prefix="ct_it_")
    p = ct(["probe", "-o", d, "--timeout", "30s"], env=env)
    need(p.returncode == 0, "the slow probe finished", p.returncode, p.stdout[-2000:])
    need("slow: cuInit(flags=0x0) took 1.0" in p.stdout, "the slow cuInit is named with its time", p.stdout[-2000:])
    p = ct(["doctor", "--json"], env=env)
    doc = json.loads(p.stdout)
    sc = doc["probe"]["verdict"]["slow_call"]
    need(doc["probe"]["status"] == "ok" and sc and sc["call"] == "cuInit(flags=0x0)" and sc["dur_ns"] >= 1e9,
         "doctor's probe: ok, with the slow call", doc["probe"])
    shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------------
# the truth about the run
# ---------------------------------------------------------------------------------
CUINIT_PY = "import ctypes, os, signal, sys, time; l = ctypes.CDLL('libcuda.so.1'); l.cuInit(0); "


@test
def t_run_o_with_traces_refused():
    r = cutrace_run([PROBE], rig_env())
    need(r.rc == 0, "first run", r.err)
    p = ct(["run", "-o", r.dir, "--", PROBE])
    need(p.returncode == 2 and "already holds 1 trace file" in p.stderr and len(p.stderr.splitlines()) == 1,
         "-o DIR with an earlier run's traces is refused in one line", p.returncode, p.stderr)
    need(len([f for f in os.listdir(r.dir) if f.endswith(".cutrace")]) == 1, "nothing was added")
    cleanup(r)


@test
def t_run_tracing_off_is_said():
    r = cutrace_run([PROBE], rig_env(CUTRACE_DISABLE="1"))
    need(r.rc == 0, "the program ran", r.err)
    need("tracing is off: CUTRACE_DISABLE=1 came from the environment" in r.err, "says tracing is off and why",
         r.err)
    need("touched CUDA" not in r.err, "does not claim that nothing touched CUDA", r.err)
    if os.geteuid() == 0:
        # root running cutrace does not make another user's directory one the shim traces into
        d = tempfile.mkdtemp(prefix="ct_it_")
        os.chown(d, 65534, 65534)
        p = ct(["run", "-o", d, "--", PROBE])
        need(p.returncode == 2 and "belongs to another user" in p.stderr, "unusable -o refused with the reason",
             p.returncode, p.stderr)
        shutil.rmtree(d, ignore_errors=True)


@test
def t_run_no_empty_directories():
    base = tempfile.mkdtemp(prefix="ct_it_")
    env = rig_env(CUTRACE_DIR=base)
    for argv in (["true"], ["ls", "/"], ["no-such-program-ct"]):
        p = subprocess.run([CUTRACE, "run", "--"] + argv, capture_output=True, text=True, env=env, timeout=60)
        need(os.listdir(base) == [], "%s left %s behind" % (argv, os.listdir(base)), p.stderr)
    p = subprocess.run([CUTRACE, "run", "--", PROBE], capture_output=True, text=True, env=env, timeout=60)
    need(len(os.listdir(base)) == 1, "a CUDA run keeps its directory", os.listdir(base))
    shutil.rmtree(base, ignore_errors=True)


@test
def t_run_states_each_end():
    # the direct child killed after a good init
    r = cutrace_run([PY, "-c", CUINIT_PY + "os.kill(os.getpid(), signal.SIGKILL)"], rig_env())
    need(r.rc == 137, "killed: 137", r.rc, r.err)
    need(re.search(r"OK, then killed by SIGKILL at \+[0-9.]+ ms: CUDA initialized", r.err), "OK, then killed", r.err)
    cleanup(r)
    # a grandchild's exit status, as its shim recorded it (format 1.2), and the child's
    r = cutrace_run(["sh", "-c", "%s -c \"%s sys.exit(5)\"; exit 3" % (PY, CUINIT_PY)], rig_env())
    need(r.rc == 3 and "OK CUDA initialized: cuInit succeeded (exit 5)" in r.err, "exit 5 stated", r.rc, r.err)
    v = r.proc("python")["verdict"]
    need(v["end"]["kind"] == "exit" and v["end"]["exit_status"] == 5 and v["end"]["t_ns"] > 0,
         "show --json: the recorded exit status", v["end"])
    cleanup(r)
    # killed at the --timeout after a good init
    # (the timeout leaves room for a python start on a loaded machine: 3.6 s seen at load 24)
    r = cutrace_run([PY, "-c", CUINIT_PY + "time.sleep(60)"], rig_env(), extra=["--timeout", "15s"])
    need(r.rc == 137 and re.search(r"OK, then killed by cutrace's --timeout 15 s at \+[0-9.]+ ms", r.err),
         "OK, then killed at the timeout", r.rc, r.err)
    cleanup(r)
    # a crash inside a call, the direct child: the signal is named
    r = cutrace_run([PY, "-c", CUINIT_PY + "os.kill(os.getpid(), signal.SIGSEGV)"], rig_env())
    need(r.rc == 139 and "killed by SIGSEGV" in r.err, "SIGSEGV named", r.rc, r.err)
    cleanup(r)


# ---------------------------------------------------------------------------------
# say it once, shortest first
# ---------------------------------------------------------------------------------
UVM_EPERM = "open:path=/dev/nvidia-uvm:error=EPERM"
UVM_WHY = "open(/dev/nvidia-uvm) failed with EPERM"


@test
def t_probe_says_it_once():
    d = tempfile.mkdtemp(prefix="ct_it_")
    p = ct(["probe", "-o", d])
    need(p.returncode == 0 and p.stdout.count("CUDA initialized: cuInit succeeded") == 1,
         "the probe's verdict once", p.stdout)
    shutil.rmtree(d, ignore_errors=True)
    for q in ([], ["-q"]):
        d = tempfile.mkdtemp(prefix="ct_it_")
        p = ct(["probe", "-o", d, "--inject", UVM_EPERM] + q)
        need(p.returncode == 1 and p.stdout.count(UVM_WHY) == 1 and p.stdout.count("  fix ") == 1,
             "probe %s: the failure's verdict once" % q, p.stdout)
        shutil.rmtree(d, ignore_errors=True)


@test
def t_run_line_and_why_differ():
    r = cutrace_run([PROBE], rig_env(), inject=[UVM_EPERM])
    need(r.rc == 1 and r.err.count(UVM_WHY) == 1, "run says the summary once", r.err)
    need("  step " in r.err and "  fix " in r.err and "timeline around the failing step" in r.err,
         "with the step, the fix and the timeline", r.err)
    cleanup(r)


@test
def t_run_q_job_grouped():
    sh = "for i in $(seq 0 11); do RANK=$i %s >/dev/null & done; wait" % PROBE
    r = cutrace_run(["sh", "-c", sh], rig_env(), inject=[UVM_EPERM], extra=["-q"])
    lines = r.err.strip().splitlines()
    need(len(lines) <= 12, "run -q of 12 alike failures: %d lines" % len(lines), r.err)
    need("12 processes traced: 0 healthy, 12 failed" in r.err and r.err.count(UVM_WHY) == 1,
         "one group, said once", r.err)
    need("12 processes: ranks 0-11 on 1 host" in r.err and "(exit 1)" in r.err, "ranks as ranges, the ends", r.err)
    cleanup(r)


@test
def t_show_job_one_timeline_per_group():
    mk = os.path.join(os.path.dirname(CUTRACE), "ct_mksynth")
    if not os.access(mk, os.X_OK):
        raise Fail("ct_mksynth not built next to cutrace")
    d = tempfile.mkdtemp(prefix="ct_it_")
    subprocess.run([mk, "--job", d, "64", "8", "3", "40"], check=True, timeout=60)
    p = ct(["show", d], env=base_env())
    blocks = [l for l in p.stdout.splitlines() if l.startswith("process ")]
    need(p.returncode == 1 and len(blocks) == 2, "one timeline per group (2 groups): %d" % len(blocks), p.stdout[:3000])
    need("(61 more processes of this group not shown: cutrace show --all)" in p.stdout and
         "(1 more process of this group" in p.stdout, "says how many more", p.stdout[-3000:])
    p = ct(["show", "--all", d], env=base_env())
    need(len([l for l in p.stdout.splitlines() if l.startswith("process ")]) == 64, "--all shows every process")
    shutil.rmtree(d, ignore_errors=True)


@test
def t_show_folds_lookups_and_filters():
    r = cutrace_run([os.path.join(PROGS, "rt_shared")], rig_env())
    p = ct(["show", r.dir], env=base_env())
    folds = re.findall(r"(cuGetProcAddress(?:_v2)?) x (\d+) more: ", p.stdout)
    need(folds and max(int(n) for _, n in folds) >= 20, "look-up runs folded", p.stdout[:4000])
    e = ct(["show", "--expand", r.dir], env=base_env())
    need(" x " not in e.stdout or not re.search(r"cuGetProcAddress(_v2)? x \d+ more", e.stdout), "--expand: no folds")
    need(len(e.stdout.splitlines()) > len(p.stdout.splitlines()) + 20, "--expand shows every look-up")
    o = ct(["show", "--only=ioctl", r.dir], env=base_env())
    calls = re.findall(r"^ +\+[0-9.]+ ms +(?:\[\d+\] )?(\w+)\(", o.stdout, re.M)
    need(calls and set(calls) == {"ioctl"}, "--only=ioctl shows only ioctls", sorted(set(calls)))
    need("  verdict  " in o.stdout, "the verdict is still there", o.stdout[-1500:])
    b = ct(["show", "--only=dl,bogus", r.dir], env=base_env())
    need(b.returncode == 2 and "'bogus'" in b.stderr, "a bad --only word", b.stderr)
    cleanup(r)
