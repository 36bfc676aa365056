#!/usr/bin/env python3
"""What the shim costs torch's CUDA initialization, inside the process, on a GPU machine.

    bench/gpu_torch_modes.py LIBCUTRACE [ROUNDS]

Times `torch.cuda.init(); torch.zeros(1, device='cuda'); torch.cuda.synchronize()`
inside a fresh python3 process (import torch is outside the timed part), ROUNDS
times (default 12) in each of four modes, the order shuffled every round:
  plain     no shim
  shim      LD_PRELOAD=LIBCUTRACE, traces to a fresh directory under /tmp
  disabled  the shim loaded with CUTRACE_DISABLE=1 (hooks pass through, no
            trace file): what loading and resolving cost
  gettime   the shim with CUTRACE_CLOCK=gettime (timestamps from clock_gettime)
and prints the median, minimum and mean of each and the median's difference
to plain.  A difference between `shim` and `disabled` is the trace and the
records; the spread between rounds is printed too (the raw times), because on
a shared machine it is larger than what the shim adds.
"""
import os, random, shutil, statistics, subprocess, sys, tempfile

CODE = ("import time, torch\n"
        "t = time.perf_counter()\n"
        "torch.cuda.init()\n"
        "torch.zeros(1, device='cuda')\n"
        "torch.cuda.synchronize()\n"
        "print(time.perf_counter() - t)\n")


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    lib = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    tmp = tempfile.mkdtemp(prefix="ct-torch-modes-")
    base = dict(os.environ)
    modes = {
        "plain": {},
        "shim": {"LD_PRELOAD": lib, "CUTRACE_DIR": tmp + "/t"},
        "disabled": {"LD_PRELOAD": lib, "CUTRACE_DISABLE": "1"},
        "gettime": {"LD_PRELOAD": lib, "CUTRACE_DIR": tmp + "/g", "CUTRACE_CLOCK": "gettime"},
    }
    t = {m: [] for m in modes}
    try:
        for _ in range(rounds):
            order = list(modes)
            random.shuffle(order)
            for m in order:
                p = subprocess.run([sys.executable, "-c", CODE], env={**base, **modes[m]},
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    print("%s: python exited %d: %s" % (m, p.returncode, p.stderr.strip()[-300:]),
                          file=sys.stderr)
                    return 1
                t[m].append(float(p.stdout.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    plain = statistics.median(t["plain"])
    print("torch.cuda.init + zeros, in process, %d shuffled rounds" % rounds)
    for m in modes:
        med = statistics.median(t[m])
        print("  %-9s median %8.2f ms  %+7.2f ms  min %8.2f  mean %8.2f" %
              (m, 1000 * med, 1000 * (med - plain), 1000 * min(t[m]), 1000 * statistics.mean(t[m])))
    for m in modes:
        print("  %-9s %s" % (m, " ".join("%.1f" % (1000 * x) for x in t[m])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
