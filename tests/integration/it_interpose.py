"""Other interposers (issue 15, "resolution that never skips anyone"): a
dl* interposer in the HAMi-core style (tests/programs/interposer.c)
preloaded after the shim, before it, and alone sees the same dlopen and
dlsym calls, and its own cuDeviceGetCount wrapper is called as often.
Loaded by itest.py (test, need, preload_run, rig_env, PROBE, PROGS, SHIM in
scope)."""
import os
import subprocess
import tempfile


def _counts(env, argv):
    """run argv with env (LD_PRELOAD as given); the interposer's line and the run"""
    fd, out = tempfile.mkstemp(prefix="ct_interp_")
    os.close(fd)
    env = dict(env, INTERPOSER_OUT=out)
    d = tempfile.mkdtemp(prefix="ct_it_")
    env["CUTRACE_DIR"] = d
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    with open(out) as f:
        lines = f.read().splitlines()
    os.unlink(out)
    return lines, p, d


def _interposer_orders(argv):
    interp = os.path.join(PROGS, "libinterposer.so")
    env = rig_env()
    fakenv = env["LD_PRELOAD"]
    alone, p0, _ = _counts(dict(env, LD_PRELOAD=interp + ":" + fakenv), argv)
    need(len(alone) == 1, "the interposer reports once without the shim", alone, p0.stderr)
    need(p0.returncode == 0, "the program runs with the interposer alone", p0.stdout, p0.stderr)
    f = dict(x.split("=") for x in alone[0].split())
    need(int(f["dlopen"]) >= 1 and int(f["dlsym"]) >= 1 and int(f["wrapped_calls"]) >= 1,
         "the interposer sees the program's dlopen, dlsym and its wrapper's calls", alone)
    runs = {}
    for order, pre in (("after", [SHIM, interp]), ("before", [interp, SHIM])):
        lines, p, d = _counts(dict(env, LD_PRELOAD=":".join(pre + [fakenv])), argv)
        need(lines == alone, "interposer preloaded %s the shim: same calls as without the shim" % order,
             "with: %s" % lines, "without: %s" % alone, p.stderr)
        need((p.returncode, p.stdout, p.stderr) == (p0.returncode, p0.stdout, p0.stderr),
             "same exit status and output (%s)" % order, p.stdout, p.stderr, p0.stdout)
        runs[order] = d
    return runs


@test
def t_interposer_sees_same_calls():
    """The probe (dlopen libcuda.so.1, dlsym of its entry points, cuInit,
    cuDeviceGetCount) with libinterposer.so preloaded after the shim, before
    it, and without the shim: the interposer counts the same dlopen and dlsym
    calls, and its wrapper of cuDeviceGetCount runs as often.  On the tree
    before this change the shim reached libc's dlopen/dlsym with
    dlvsym(..., "GLIBC_2.34") and the interposer after it saw 0 and 0.  With
    the interposer after the shim the trace still has cuInit."""
    runs = _interposer_orders([PROBE])
    r = Run(0, "", "", runs["after"])
    p = r.proc("cutrace-probe")
    need(events(p, "cuInit"), "cuInit is traced with the interposer after the shim",
         [e["call"] for e in p["events"]][:40])
