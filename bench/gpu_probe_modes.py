#!/usr/bin/env python3
"""Where the shim's cost in a short CUDA process goes, on a GPU machine.

    bench/gpu_probe_modes.py PROBE LIBCUTRACE [ROUNDS]

Runs PROBE (cutrace-probe: dlopen libcuda.so.1, cuInit, list devices) ROUNDS
times (default 40) in each of four modes, the order shuffled every round:
  plain     no shim
  shim      LD_PRELOAD=LIBCUTRACE, traces to a fresh directory under /tmp
  disabled  the shim loaded with CUTRACE_DISABLE=1 (hooks pass through, no
            trace file): what loading and resolving costs
  shm       the shim tracing to /dev/shm (tmpfs: fallocate there takes memory)
and prints the median wall time of each and its difference to plain, so a
difference between `shim` and `disabled` is the trace file and the records.
"""
import os, random, shutil, statistics, subprocess, sys, tempfile, time

def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    probe, lib = sys.argv[1], os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    tmp = tempfile.mkdtemp(prefix="ct-modes-")
    shm = tempfile.mkdtemp(prefix="ct-modes-", dir="/dev/shm") if os.path.isdir("/dev/shm") else tmp
    base = dict(os.environ)
    pre = (base.get("LD_PRELOAD", "") + " " + lib).strip()  # after the rig's fake kernel, if any
    modes = {
        "plain": {},
        "shim": {"LD_PRELOAD": pre, "CUTRACE_DIR": tmp + "/t"},
        "disabled": {"LD_PRELOAD": pre, "CUTRACE_DISABLE": "1"},
        "shm": {"LD_PRELOAD": pre, "CUTRACE_DIR": shm + "/t"},
    }
    t = {m: [] for m in modes}
    for m in modes:  # one unmeasured run each
        subprocess.run([probe], env={**base, **modes[m]}, stdout=subprocess.DEVNULL, check=True)
    for _ in range(rounds):
        order = list(modes)
        random.shuffle(order)
        for m in order:
            for d in (tmp + "/t", shm + "/t"):
                shutil.rmtree(d, ignore_errors=True)
            t0 = time.perf_counter()
            subprocess.run([probe], env={**base, **modes[m]}, stdout=subprocess.DEVNULL, check=True)
            t[m].append(time.perf_counter() - t0)
    p = statistics.median(t["plain"])
    print("probe process, median wall of %d runs each (shuffled rounds)" % rounds)
    for m in modes:
        s = statistics.median(t[m])
        print("  %-9s %8.2f ms  %+7.2f ms  ratio %.4f   (min %.2f ms)" %
              (m, s * 1e3, (s - p) * 1e3, s / p, min(t[m]) * 1e3))
    shutil.rmtree(tmp, ignore_errors=True)
    if shm != tmp:
        shutil.rmtree(shm, ignore_errors=True)
    return 0

if __name__ == "__main__":
    sys.exit(main())
