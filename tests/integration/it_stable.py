# --no-time is stable output: two runs of one program print the same bytes
# (issue 17, "Stable means stable").  The program: fork_probe initialises
# CUDA through the fake driver (the NVIDIA open/ioctl sequence), forks a
# child that opens /dev/nvidiactl and sends an ioctl, and the child execs
# rt_shared, the real libcudart with its hundreds of cuGetProcAddress
# look-ups.  Times, addresses (ASLR), pids and tids, the start time and the
# trace file names differ between the runs; none of them may show.
import re


def _stable_outputs(top, i, cmd, extra_show=()):
    """One run into top/d (the same path both times), its outputs, then moved away."""
    d = os.path.join(top, "d")
    env = rig_env()
    p = subprocess.run([CUTRACE, "run", "--no-time", "--color=never", "-o", d, "--"] + cmd,
                       env=env, capture_output=True, timeout=120)
    need(p.returncode in (0, 1), "run %d rc=%d" % (i, p.returncode), p.stderr.decode(errors="replace"))
    out = {"run": p.stderr}
    # (--raw's parameter blocks are memory as recorded, pointers included: not compared)
    for name, args in (("show-all", ["--all", "--color=never"]), ("show", ["--color=never"]),
                       ("json", ["--json"])):
        s = subprocess.run([CUTRACE, "show", "--no-time"] + args + list(extra_show) + [d], capture_output=True)
        need(s.returncode in (0, 1), "show %s rc=%d" % (name, s.returncode), s.stderr)
        out[name] = s.stdout
    s = subprocess.run([CUTRACE, "show", "--no-time", "--pids", "--json", d], capture_output=True)
    out["pids"] = s.stdout
    os.rename(d, os.path.join(top, "d.%d" % i))
    return out


def _diff_lines(a, b):
    al, bl = a.split(b"\n"), b.split(b"\n")
    return sum(1 for x, y in zip(al, bl) if x != y) + abs(len(al) - len(bl))


@test
def t_no_time_two_runs_byte_identical():
    top = tempfile.mkdtemp(prefix="ct_it_stable_")
    cmd = [os.path.join(PROGS, "fork_probe"), "--exec", os.path.join(PROGS, "rt_shared")]
    a = _stable_outputs(top, 1, cmd)
    b = _stable_outputs(top, 2, cmd)
    # the runs did what the test needs: a fork child, an exec, the ioctls, the look-ups
    doc = json.loads(a["json"])
    procs = doc["processes"]
    need(len(procs) == 3, "3 traced processes (parent, fork child, exec'd rt_shared)", [p["exe"] for p in procs])
    need(any(p["flags"]["forked"] for p in procs), "a fork child", [p["flags"] for p in procs])
    calls = [e["call"] for p in procs for e in p["events"]]
    need(calls.count("ioctl") >= 20, "the NVIDIA ioctl sequence", calls.count("ioctl"))
    need(sum(c.startswith("cuGetProcAddress") for c in calls) >= 100, "cudart's look-ups",
         sum(c.startswith("cuGetProcAddress") for c in calls))
    # byte for byte
    for k in ("run", "show-all", "show", "json"):
        need(a[k] == b[k], "--no-time %s differs between two runs in %d lines" % (k, _diff_lines(a[k], b[k])),
             "\n".join("-%s\n+%s" % (x, y) for x, y in zip(a[k].decode(errors="replace").split("\n"),
                                                         b[k].decode(errors="replace").split("\n")) if x != y)[:3000])
    # and for the right reason: nothing run-dependent left in
    need(doc["no_time"] is True and doc["real_pids"] is False, "the document says it is stable", doc.get("no_time"))
    for p in procs:
        need("start_realtime_ns" not in p and "start_mono_ns" not in p, "start times in --no-time JSON")
        need(p["pid"] in (1, 2, 3), "pid not an ordinal", p["pid"])
        for e in p["events"]:
            need("t_ns" not in e and "dur_ns" not in e, "times in a --no-time event", e)
    for k in ("show-all", "run", "json"):
        txt = a[k].decode(errors="replace")
        need(not re.search(r"0x(55|56|7f)[0-9a-f]{8,}", txt), "an address in --no-time %s" % k,
             re.findall(r".{60}0x(?:55|56|7f)[0-9a-f]{8,}.{20}", txt)[:3])
        need(not re.search(r"[+-]\d+\.\d{3} ms|<\d[\d.]* [mun]?s>", txt), "a time in --no-time %s" % k,
             re.findall(r".{40}(?:[+-]\d+\.\d{3} ms|<\d[\d.]* [mun]?s>).{20}", txt)[:3])
        need("<time>" in txt or k == "json", "trace file names without their time (%s)" % k)
    need(b"<addr>" in a["show-all"] and b"process #1 (ppid #" in a["show-all"], "addresses and pids hidden",
         a["show-all"][:600])
    # --pids keeps the real ones: they differ between the runs
    pa = [p["pid"] for p in json.loads(a["pids"])["processes"]]
    pb = [p["pid"] for p in json.loads(b["pids"])["processes"]]
    need(pa != pb and min(pa) > 3 and json.loads(a["pids"])["real_pids"] is True, "--pids: real pids", pa, pb)
    shutil.rmtree(top, ignore_errors=True)


@test
def t_no_time_probe_two_runs_byte_identical():
    top = tempfile.mkdtemp(prefix="ct_it_stable_")
    outs = []
    for i in (1, 2):
        d = os.path.join(top, "p")
        got = []
        for extra in ([], ["--json"]):
            p = subprocess.run([CUTRACE, "probe", "--no-time", "--color=never", "-o", d] + extra,
                               env=rig_env(), capture_output=True, timeout=120)
            need(p.returncode == 0, "probe rc=%d" % p.returncode, p.stderr)
            got.append(p.stdout)
            os.rename(d, os.path.join(top, "p.%d%s" % (i, "j" if extra else "")))
        outs.append(got)
    need(b"cuInit(flags=0x0) = CUDA_SUCCESS" in outs[0][0], "the probe's timeline", outs[0][0][-1500:])
    for k, name in ((0, "text"), (1, "json")):
        need(outs[0][k] == outs[1][k], "probe --no-time %s differs in %d lines" % (name, _diff_lines(outs[0][k], outs[1][k])),
             "\n".join("-%s\n+%s" % (x, y) for x, y in zip(outs[0][k].decode(errors="replace").split("\n"),
                                                         outs[1][k].decode(errors="replace").split("\n")) if x != y)[:3000])
    shutil.rmtree(top, ignore_errors=True)


@test
def t_show_raw_needs_json():
    r = cutrace_run([PROBE], rig_env())
    for args, rc in ((["--raw"], 2), (["--raw", "--format=chrome"], 2), (["--raw", "--json"], 0)):
        s = subprocess.run([CUTRACE, "show"] + args + [r.dir], capture_output=True, text=True)
        need(s.returncode == rc, "show %s rc=%d, want %d" % (args, s.returncode, rc), s.stderr)
        if rc == 2:
            need(s.stdout == "" and len(s.stderr.strip().split("\n")) == 1 and "--json" in s.stderr,
                 "one line naming --json", s.stderr)
    cleanup(r)


@test
def t_show_no_time_chrome_refused():
    # a Chrome trace is timestamps and durations: --no-time cannot be kept, and is not ignored
    r = cutrace_run([PROBE], rig_env())
    s = subprocess.run([CUTRACE, "show", "--no-time", "--format=chrome", r.dir], capture_output=True, text=True)
    need(s.returncode == 2 and s.stdout == "" and len(s.stderr.strip().split("\n")) == 1
         and "--no-time" in s.stderr and "Chrome" in s.stderr, "show --no-time --format=chrome: one line, exit 2",
         s.returncode, s.stderr, s.stdout[:300])
    # the formats that take it: prometheus has no times to hide
    for fmt in ("text", "json", "prometheus"):
        s = subprocess.run([CUTRACE, "show", "--no-time", "--format=" + fmt, r.dir], capture_output=True)
        need(s.returncode == 0 and s.stdout, "show --no-time --format=%s" % fmt, s.returncode, s.stderr)
    cleanup(r)


@test
def t_no_time_doctor_two_runs_identical():
    outs = []
    for i in (1, 2):
        got = []
        for extra in ([], ["--json"], ["--check"]):
            p = subprocess.run([CUTRACE, "doctor", "--no-time", "--color=never"] + extra, env=rig_env(),
                               capture_output=True, timeout=180)
            need(p.returncode in (0, 1), "doctor rc=%d" % p.returncode, p.stderr)
            got.append(p.stdout)
        outs.append(got)
    need(b"run-<time>" in outs[0][0] and b"pid #1 (cutrace-probe)" in outs[0][0], "doctor's probe, stable",
         outs[0][0][-800:])
    need(b"(trace: /" in outs[0][2] and b"/run-<time>)" in outs[0][2], "doctor --check's trace, stable", outs[0][2])
    doc = json.loads(outs[0][1])
    need(doc["probe"]["trace_dir"].endswith("/run-<time>") and "t_ns" not in json.dumps(doc["probe"]),
         "doctor --json's probe, stable", doc["probe"])
    for k, name in ((0, "text"), (1, "json"), (2, "check")):
        need(outs[0][k] == outs[1][k], "doctor --no-time %s differs in %d lines" % (name, _diff_lines(outs[0][k], outs[1][k])),
             "\n".join("-%s\n+%s" % (x, y) for x, y in zip(outs[0][k].decode(errors="replace").split("\n"),
                                                         outs[1][k].decode(errors="replace").split("\n")) if x != y)[:3000])
    # Prometheus metrics are times (the check's, cuInit's): --no-time is refused, not ignored
    p = subprocess.run([CUTRACE, "doctor", "--no-time", "--format=prometheus"], env=rig_env(),
                       capture_output=True, text=True, timeout=60)
    need(p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().split("\n")) == 1
         and "--no-time" in p.stderr, "doctor --no-time --format=prometheus: one line, exit 2", p.returncode, p.stderr)


@test
def t_no_time_slow_call():
    # a cuInit held for a second, then successful: the verdict says it was slow, not how slow
    env = rig_env(FAKENV_HANG_CMD="37", FAKENV_HANG_SEC="1")
    top = tempfile.mkdtemp(prefix="ct_it_stable_")
    d = os.path.join(top, "p")
    p = subprocess.run([CUTRACE, "probe", "--no-time", "--color=never", "-o", d, "--timeout", "30s"], env=env,
                       capture_output=True, text=True, timeout=120)
    need(p.returncode == 0, "the slow probe finished", p.returncode, p.stdout[-2000:])
    need("slow: cuInit(flags=0x0) took over 1 s" in p.stdout and not re.search(r"took \d+\.\d", p.stdout),
         "the slow cuInit named without its time", p.stdout[-2000:])
    s = subprocess.run([CUTRACE, "show", "--no-time", "--json", d], capture_output=True, text=True)
    v = json.loads(s.stdout)["processes"][0]["verdict"]
    need(v["slow_call"] == {"call": "cuInit(flags=0x0)"} and "took over 1 s" in v["summary"],
         "JSON: the slow call without dur_ns", v)
    shutil.rmtree(top, ignore_errors=True)


@test
def t_no_time_default_run_dir():
    # without -o cutrace names the run's directory run-YYYYMMDD-HHMMSS-PID: under --no-time that
    # name is run-<time> wherever it shows (the file's path, CUTRACE_DIR in the environment block)
    top = tempfile.mkdtemp(prefix="ct_it_stable_")
    outs = []
    for i in (1, 2):
        got = []
        for cmd in (["probe", "--no-time", "--color=never"], ["probe", "--no-time", "--json"],
                    ["run", "--no-time", "--color=never", "--", PROBE]):
            p = subprocess.run([CUTRACE] + cmd, env=rig_env(CUTRACE_DIR=os.path.join(top, "base")),
                               capture_output=True, timeout=120)
            need(p.returncode == 0, "%s rc=%d" % (cmd[0], p.returncode), p.stderr)
            got.append(p.stdout + p.stderr)
        runs = sorted(os.listdir(os.path.join(top, "base")))
        need(len(runs) == 3 and all(re.match(r"run-\d{8}-\d{6}-\d+$", r) for r in runs), "3 run directories", runs)
        p = subprocess.run([CUTRACE, "show", "--no-time", "--color=never", os.path.join(top, "base", runs[2])],
                           capture_output=True)
        got.append(p.stdout)
        os.rename(os.path.join(top, "base"), os.path.join(top, "base.%d" % i))
        outs.append(got)
    txt = outs[0][0].decode(errors="replace")
    need("/run-<time>/vm-#1-<time>.cutrace" in txt and "CUTRACE_DIR=%s/base/run-<time>\n" % top in txt,
         "the run directory's name hidden", txt[:1500])
    need('"CUTRACE_DIR": "%s/base/run-<time>"' % top in outs[0][1].decode(), "JSON: CUTRACE_DIR hidden",
         outs[0][1][:3000])
    for k, name in enumerate(("probe", "probe --json", "run", "show")):
        need(outs[0][k] == outs[1][k], "--no-time %s differs in %d lines" % (name, _diff_lines(outs[0][k], outs[1][k])),
             "\n".join("-%s\n+%s" % (x, y) for x, y in zip(outs[0][k].decode(errors="replace").split("\n"),
                                                         outs[1][k].decode(errors="replace").split("\n")) if x != y)[:3000])
    shutil.rmtree(top, ignore_errors=True)


@test
def t_no_time_replay_two_runs_byte_identical():
    # replay recreates a recorded failure around a command: its verdicts, twice, alike
    top = tempfile.mkdtemp(prefix="ct_it_stable_")
    r = cutrace_run([PROBE], rig_env(FAKENV_DENY="/dev/nvidia-uvm=EPERM"))
    outs = []
    for i in (1, 2):
        p = subprocess.run([CUTRACE, "replay", "--no-time", "--color=never", r.dir, "--", PROBE],
                           env=rig_env(CUTRACE_DIR=os.path.join(top, "base")), capture_output=True, timeout=120)
        need(p.returncode == 0 and b"replay: reproduced" in p.stdout, "replay rc=%d" % p.returncode, p.stdout, p.stderr)
        outs.append(p.stdout + p.stderr)
        os.rename(os.path.join(top, "base"), os.path.join(top, "base.%d" % i))
    need(b"replayed: pid #2 (cutrace-probe)" in outs[0] and b"/run-<time>" in outs[0], "replay, stable", outs[0])
    need(outs[0] == outs[1], "replay --no-time differs in %d lines" % _diff_lines(outs[0], outs[1]),
         outs[0].decode(errors="replace"), outs[1].decode(errors="replace"))
    cleanup(r)
    shutil.rmtree(top, ignore_errors=True)
