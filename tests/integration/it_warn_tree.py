# The shim warns at most once per process tree (issue 17, "One option
# grammar"): a bad CUTRACE_INJECT is said once on stderr however many images
# a chain of execs and forks loads the shim into, and every trace says in its
# notes that the rules were refused.  Loaded by itest.py (test, need,
# preload_run, cutrace_run, rig_env, ...).
import os
import shutil
import subprocess
import tempfile

BAD = "cuInit:retval=NOPE"

# chain.sh N: N execs of itself, then a fork tree: three subshells (forks
# without exec), each running the probe and a shell that runs it; then a
# Python that forks (a child without exec records too); then the probe
CHAIN = r'''#!/bin/sh
n=$1
if [ "$n" -gt 0 ]; then exec sh "$0" $((n - 1)); fi
for i in 1 2 3; do
  ( "$PROBE" >/dev/null; sh -c '"$PROBE" >/dev/null' ) &
done
wait
"$PY" -c '
import ctypes, os
pid = os.fork()
ctypes.CDLL("libcuda.so.1").cuInit(0)
if pid:
    os.waitpid(pid, 0)
else:
    os._exit(0)
'
"$PROBE" >/dev/null
'''


def warn_lines(err):
    return [l for l in err.splitlines() if "ignoring CUTRACE_INJECT" in l]


def check_traces(d, want):
    p = subprocess.run([CUTRACE, "show", "--json", d], capture_output=True, text=True, timeout=60)
    import json
    procs = json.loads(p.stdout)["processes"]
    need(len(procs) == want, "%d traces, want %d" % (len(procs), want), [x["exe"] for x in procs])
    for x in procs:
        need(x["flags"]["inject_malformed"], "pid %d: inject_malformed" % x["pid"], x["flags"])
        notes = [n for n in x["notes"] if n.startswith("CUTRACE_INJECT refused, nothing is injected")
                 and "unknown CUresult code 'NOPE'" in n]
        need(len(notes) == 1, "pid %d (%s): a note says the rules were refused" % (x["pid"], x["exe"]), x["notes"])
    return procs


@test
def t_warn_once_per_process_tree():
    tmp = tempfile.mkdtemp(prefix="ct_wt_")
    chain = os.path.join(tmp, "chain.sh")
    open(chain, "w").write(CHAIN)
    py = E.get("PYTHON3") or shutil.which("python3")
    env = rig_env(CUTRACE_INJECT=BAD, PROBE=PROBE, PY=py)
    # LD_PRELOAD as a user sets it: every image of the tree loads the shim
    r = preload_run(["sh", chain, "10"], env)
    need(r.rc == 0, "the chain ran", r.rc, r.err[-2000:])
    lines = warn_lines(r.err)
    need(len(lines) == 1, "one warning line for the tree, got %d" % len(lines), r.err[-3000:])
    procs = check_traces(r.dir, 9)  # 3 x 2 probes, python and its child, the last probe
    need(sum(1 for x in procs if x["flags"]["forked"]) >= 1, "a fork child without exec traced", procs)
    said = [x for x in procs if "said on stderr by pid" in x["notes"][0]]
    need(len(said) >= 8, "the others name who said it", [x["notes"] for x in procs])
    # a second tree into the same directory is told again, once
    d2 = r.dir
    env2 = dict(env)
    env2["LD_PRELOAD"] = SHIM + ":" + env["LD_PRELOAD"]
    env2["CUTRACE_DIR"] = d2
    p = subprocess.run(["sh", chain, "3"], env=env2, capture_output=True, text=True, timeout=120)
    need(len(warn_lines(p.stderr)) == 1, "a new tree warns once", p.stderr[-3000:])
    cleanup(r)
    # cutrace run refuses the bad rule itself, in one line (nothing runs)
    p = subprocess.run([CUTRACE, "run", "-o", os.path.join(tmp, "run"), "--", "sh", chain, "2"], env=env,
                       capture_output=True, text=True, timeout=60)
    need(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "--help-inject" in p.stderr,
         "cutrace run: one line", p.returncode, p.stderr)
    shutil.rmtree(tmp, ignore_errors=True)


@test
def t_warn_tree_no_empty_run_dir():
    # the marker of a said warning does not keep an untraced run's directory
    base = tempfile.mkdtemp(prefix="ct_wt_")
    # (a program that sets the bad rule for its own children: cutrace run
    # checks only its own environment)
    p = subprocess.run([CUTRACE, "run", "-o", os.path.join(base, "run"), "--", "sh", "-c",
                        "CUTRACE_INJECT='%s' sh -c '/bin/true; /bin/true'" % BAD],
                       env=rig_env(), capture_output=True, text=True, timeout=60)
    need(len(warn_lines(p.stderr)) == 1, "one warning", p.stderr)
    need(os.listdir(base) == [], "no run directory left", os.listdir(base), p.stdout, p.stderr)
    shutil.rmtree(base, ignore_errors=True)


@test
def t_warn_tree_tracing_disabled():
    # a limit every process meets only when it first touches CUDA: the fork
    # tree's probes start side by side, none an ancestor of another
    tmp = tempfile.mkdtemp(prefix="ct_wt_")
    chain = os.path.join(tmp, "chain.sh")
    open(chain, "w").write(CHAIN)
    py = E.get("PYTHON3") or shutil.which("python3")
    env = rig_env(PROBE=PROBE, PY=py)
    # RLIMIT_FSIZE 100 blocks: below the smallest trace file
    r = preload_run(["sh", "-c", 'ulimit -f 100 && exec sh "$0" 4', chain], env)
    lines = [l for l in r.err.splitlines() if "tracing disabled" in l]
    need(r.rc == 0 and len(lines) == 1, "one 'tracing disabled' line for the tree, got %d" % len(lines),
         r.rc, r.err[-3000:])
    need(not [f for f in os.listdir(r.dir) if f.endswith(".cutrace")], "no trace", os.listdir(r.dir))
    cleanup(r)
    shutil.rmtree(tmp, ignore_errors=True)


@test
def t_warn_tree_unusable_dir():
    # the commonest "tracing disabled": a CUTRACE_DIR that cannot be used,
    # so no marker can go there either: it goes into /tmp/cutrace-EUID
    tmp = tempfile.mkdtemp(prefix="ct_wt_")
    chain = os.path.join(tmp, "chain.sh")
    open(chain, "w").write(CHAIN)
    notdir = os.path.join(tmp, "file")
    open(notdir, "w").write("")
    py = E.get("PYTHON3") or shutil.which("python3")
    env = rig_env(PROBE=PROBE, PY=py, CUTRACE_DIR=os.path.join(notdir, "sub"))
    env["LD_PRELOAD"] = SHIM + ":" + env["LD_PRELOAD"]
    p = subprocess.Popen(["sh", chain, "4"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=120)
    lines = [l for l in err.splitlines() if "tracing disabled" in l]
    need(p.returncode == 0 and len(lines) == 1, "one 'tracing disabled' line for the tree, got %d" % len(lines),
         p.returncode, err[-3000:])
    need("Not a directory" in lines[0], "the line says why", lines[0])
    fallback = "/tmp/cutrace-%d" % os.geteuid()
    mine = [f for f in os.listdir(fallback) if f.startswith(".warned-disabled-%d-" % p.pid)]
    need(len(mine) == 1, "the marker in %s, named by the tree's root" % fallback, os.listdir(fallback))
    for f in mine:
        os.unlink(os.path.join(fallback, f))
    shutil.rmtree(tmp, ignore_errors=True)
