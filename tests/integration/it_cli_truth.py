# The CLI tells the truth about a run (issue 17): bounded waits in probe and
# doctor, how each process ended, one verdict block per process, stable
# output.  Loaded by itest.py, which provides test, need, Fail, cutrace_run,
# rig_env, base_env, expect_verdict, cleanup ...
import json
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
