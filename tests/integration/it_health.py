# `cutrace doctor --check` and `--format=prometheus` (issue 20): one line and
# exit 0 healthy / 1 a problem / 2 could not check, as node-problem-detector
# custom plugins and Slurm's HealthCheckProgram read them.  The machine
# checks see this GPU-less machine (a problem); the probe runs on the rig, so
# its verdict (which comes first) is the rig's.  Healthy lines are checked
# in tests/unit_doctor/test_health.c and on the H200 (scripts/gpu-check.sh).
import time


def check(env, *args, timeout=60):
    t0 = time.monotonic()
    r = subprocess.run([CUTRACE, "doctor", "--check"] + list(args), env=env, capture_output=True,
                       text=True, timeout=timeout)
    return r, time.monotonic() - t0


def one_line(r):
    need(r.stdout.endswith("\n") and r.stdout.count("\n") == 1, "one line on stdout", r.stdout, r.stderr)
    return r.stdout.rstrip("\n")


@test
def t_check_broken_machine():
    r, _ = check(base_env())
    line = one_line(r)
    if os.path.exists("/dev/nvidiactl"):
        need(r.returncode in (0, 1), "exit 0 or 1 on a GPU machine", line)
        return
    need(r.returncode == 1, "exit 1 without a driver", r.returncode, line)
    need(re.match(r"PROBLEM \[(loader|device-node)\] .+; fix: .+", line), "finding with layer and fix", line)
    m = re.search(r"\(trace: (\S+)\)$", line)
    need(m and os.path.isdir(m.group(1)), "the trace of a problem is kept", line)
    shutil.rmtree(m.group(1), ignore_errors=True)


@test
def t_check_probe_verdict_first():
    r, _ = check(rig_env(FAKENV_DENY="/dev/nvidia-uvm=EPERM"))
    line = one_line(r)
    need(r.returncode == 1, "exit 1", r.returncode, line)
    need(line.startswith("PROBLEM [device-node] open(/dev/nvidia-uvm) failed with EPERM"), "the probe's root cause", line)
    need("; fix: " in line, "a fix", line)


@test
def t_check_hang_is_a_finding():
    r, took = check(rig_env(FAKENV_HANG_CMD="0x2a", FAKENV_HANG_SEC="60"), "--timeout", "8s")
    line = one_line(r)
    need(r.returncode == 1, "a hung cuInit is a problem", r.returncode, line)
    need(re.match(r"PROBLEM \[resource-manager\] cuInit\(flags=0x0\) .*(never returned|did not return within)", line), "names the hang", line)
    need(took < 8 + 2, "answered within --timeout (%.1f s)" % took, line)


@test
def t_check_cannot_check():
    r, took = check(rig_env(), "--timeout", "1ms")
    line = one_line(r)
    need(r.returncode == 2, "exit 2 when no answer came in time", r.returncode, line)
    need(line.startswith("UNKNOWN could not check: no answer within 1ms"), "says why", line)
    need(took < 5, "did not wait for the checks (%.1f s)" % took)
    r = subprocess.run([CUTRACE, "doctor", "--check", "--timeout", "soon"], capture_output=True, text=True)
    need(r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, "bad --timeout: usage error", r)
    r = subprocess.run([CUTRACE, "doctor", "--format=yaml"], capture_output=True, text=True)
    need(r.returncode == 2 and r.stderr.count("\n") == 1, "bad --format: usage error", r)


PROM_LINE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? \S+$')


def parse_prom(text):
    """Families (HELP and TYPE before their samples) and samples {name: [(labels, value)]}."""
    typed, helped, samples = set(), set(), {}
    for ln in text.splitlines():
        if ln.startswith("# HELP "):
            helped.add(ln.split()[2])
        elif ln.startswith("# TYPE "):
            typed.add(ln.split()[2])
        else:
            need(PROM_LINE.match(ln), "exposition line", ln)
            name = re.match(r"[^{ ]+", ln).group(0)
            need(name in typed and name in helped, "HELP and TYPE before %s" % name, text)
            labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:\\.|[^"\\])*)"', ln.split("} ")[0]))
            samples.setdefault(name, []).append((labels, float(ln.rsplit(" ", 1)[1])))
    return samples


@test
def t_doctor_prometheus():
    r = subprocess.run([CUTRACE, "doctor", "--format=prometheus"], env=rig_env(FAKENV_DENY="/dev/nvidia-uvm=EPERM"),
                       capture_output=True, text=True, timeout=60)
    need(r.returncode == 1, "exit status as --check", r.returncode, r.stdout)
    s = parse_prom(r.stdout)
    (labels, value), = s["cutrace_cuda_init_ok"]
    need(value == 0 and labels["layer"] == "device-node" and "nvidia-uvm" in labels["cause"], "init_ok", labels)
    need(s["cutrace_check_status"][0][1] == 1, "check status")
    need(s["cutrace_probe_cuinit_seconds"][0][1] > 0, "cuInit time")
    need(s["cutrace_driver_info"][0][0]["cuda_driver_version"] == "13.0", "info metric", s["cutrace_driver_info"])
    r = subprocess.run([CUTRACE, "doctor", "--format=prometheus", "--timeout", "1ms"], env=rig_env(),
                       capture_output=True, text=True, timeout=60)
    need(r.returncode == 2, "could not check: 2", r.returncode)
    s = parse_prom(r.stdout)
    need(s["cutrace_check_status"][0][1] == 2, "status 2 in the metrics", r.stdout)


@test
def t_slurm_healthcheck_wrapper():
    """contrib/slurm/cutrace-healthcheck.sh drains with the finding as the reason and
    resumes only what it drained; scontrol is a stand-in that logs its arguments."""
    here = os.path.dirname(os.path.abspath(__file__))
    wrapper = os.path.join(here, "..", "..", "contrib", "slurm", "cutrace-healthcheck.sh")
    d = tempfile.mkdtemp(prefix="ct_hc_")
    try:
        log = os.path.join(d, "log")
        sc = os.path.join(d, "scontrol")
        with open(sc, "w") as f:
            f.write('#!/bin/sh\nprintf "%%s|" "$@" >>%s; echo >>%s\n'
                    '[ "$1" = show ] && echo "NodeName=n1 State=IDLE+DRAIN Reason=$CT_REASON"\nexit 0\n' % (log, log))
        os.chmod(sc, 0o755)
        env = rig_env(FAKENV_DENY="/dev/nvidia-uvm=EPERM", SCONTROL=sc, CUTRACE=CUTRACE, CUTRACE_NODE="n1",
                      CUTRACE_CHECK_TIMEOUT="30s")
        r = subprocess.run(["sh", wrapper], env=env, capture_output=True, text=True, timeout=60)
        need(r.returncode == 1, "wrapper passes on exit 1", r.returncode, r.stderr)
        calls = open(log).read().splitlines()
        need(len(calls) == 1 and calls[0].startswith("update|nodename=n1|state=drain|reason=cutrace: PROBLEM "
                                                     "[device-node] open(/dev/nvidia-uvm) failed with EPERM"),
             "drained with the finding", calls)
        need(len(calls[0].split("reason=")[1]) <= 241, "reason kept short", calls[0])
        # healthy: a stand-in cutrace; resumes a node cutrace drained, leaves others
        fake = os.path.join(d, "cutrace")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'OK CUDA initialized: 1 GPU'\nexit 0\n")
        os.chmod(fake, 0o755)
        for reason, want in (("cutrace: PROBLEM [uvm] x", True), ("bad DIMM [root@2026]", False)):
            open(log, "w").close()
            env.update(CUTRACE=fake, CT_REASON=reason)
            r = subprocess.run(["sh", wrapper], env=env, capture_output=True, text=True, timeout=60)
            calls = open(log).read().splitlines()
            need(r.returncode == 0, "healthy: 0", r.returncode)
            need(("update|nodename=n1|state=resume|" in calls) == want, "resume iff cutrace drained (%s)" % reason,
                 calls)
    finally:
        shutil.rmtree(d, ignore_errors=True)
