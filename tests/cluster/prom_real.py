#!/usr/bin/env python3
"""The Prometheus metrics of `cutrace doctor --format=prometheus` and `cutrace
show --format=prometheus` through a real Prometheus (Debian's prometheus and
prometheus-node-exporter): promtool checks both files; node-exporter's textfile
collector serves them; Prometheus, started here on loopback with random free
ports and a temporary data directory, scrapes it; its query API returns the
values.  Both daemons are stopped at the end.

usage: prom_real.py CUTRACE MKSYNTH FAKENV FAKECUDA_DIR [OUTDIR]
Exit 77 (skipped, one line) when prometheus, node-exporter or promtool is not
installed (scripts/setup.sh installs them when it can)."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

cutrace, mksynth, fakenv, fakecuda = sys.argv[1:5]
outdir = sys.argv[5] if len(sys.argv) > 5 else None


def which(*names):
    for n in names:
        p = shutil.which(n) or (os.path.exists("/usr/bin/" + n) and "/usr/bin/" + n)
        if p:
            return p
    return None


prom, ne, promtool = which("prometheus"), which("prometheus-node-exporter", "node_exporter"), which("promtool")
if not (prom and ne and promtool):
    print("SKIP: prometheus, prometheus-node-exporter or promtool not installed (apt-get install prometheus "
          "prometheus-node-exporter)")
    sys.exit(77)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def fail(msg, *ctx):
    print("FAIL: " + msg + "".join("\n" + str(c)[:3000] for c in ctx))
    sys.exit(1)


work = tempfile.mkdtemp(prefix="ct_prom_")
procs = []
try:
    tf = os.path.join(work, "textfile")
    os.mkdir(tf)
    # the doctor's check on the rig: the probe denied /dev/nvidia-uvm
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKENV_", "CUTRACE_"))}
    env.update(LD_PRELOAD=fakenv, LD_LIBRARY_PATH=fakecuda, FAKENV_DENY="/dev/nvidia-uvm=EPERM")
    with open(os.path.join(tf, "cutrace.prom.tmp"), "w") as f:
        r = subprocess.run([cutrace, "doctor", "--format=prometheus"], env=env, stdout=f, timeout=120)
    if r.returncode != 1:
        fail("doctor --format=prometheus exited %d, want 1" % r.returncode)
    os.rename(os.path.join(tf, "cutrace.prom.tmp"), os.path.join(tf, "cutrace.prom"))
    # a job of 64 ranks on 8 hosts, 17 failed
    job = os.path.join(work, "job")
    subprocess.run([mksynth, "--job", job, "64", "8"] + [str(x) for x in range(8, 24)] + ["40"], check=True)
    with open(os.path.join(tf, "cutrace_job.prom"), "w") as f:
        r = subprocess.run([cutrace, "show", "--format=prometheus", job], stdout=f, timeout=120)
    if r.returncode != 1:
        fail("show --format=prometheus exited %d, want 1" % r.returncode)
    for name in ("cutrace.prom", "cutrace_job.prom"):
        with open(os.path.join(tf, name)) as f:
            r = subprocess.run([promtool, "check", "metrics"], stdin=f, capture_output=True, text=True)
        if r.returncode != 0 or r.stdout.strip() or r.stderr.strip():
            fail("promtool check metrics %s" % name, r.stdout, r.stderr)
    print("ok: promtool check metrics: both files clean")

    ne_port, prom_port = free_port(), free_port()
    procs.append(subprocess.Popen([ne, "--web.listen-address=127.0.0.1:%d" % ne_port,
                                   "--collector.disable-defaults", "--collector.textfile",
                                   "--collector.textfile.directory=" + tf],
                                  stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "ne.log"), "w")))
    cfg = os.path.join(work, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % ne_port)
    procs.append(subprocess.Popen([prom, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(work, "data"),
                                   "--web.listen-address=127.0.0.1:%d" % prom_port],
                                  stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prom.log"), "w")))

    def query(q):
        url = "http://127.0.0.1:%d/api/v1/query?query=%s" % (prom_port, urllib.parse.quote(q))
        with urllib.request.urlopen(url, timeout=5) as u:
            doc = json.load(u)
        if doc.get("status") != "success":
            fail("query %s" % q, doc)
        return doc["data"]["result"]

    import urllib.parse
    deadline = time.monotonic() + 60
    res = []
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                fail("a daemon exited (%d)" % p.returncode, open(os.path.join(work, "ne.log")).read(),
                     open(os.path.join(work, "prom.log")).read())
        try:
            res = query("cutrace_job_processes")
            if res and query("cutrace_cuda_init_ok"):
                break
        except OSError:
            pass
        time.sleep(0.5)
    if not res:
        fail("Prometheus returned no cutrace metric within 60 s", open(os.path.join(work, "prom.log")).read()[-2000:])

    got = {}
    for q in ("cutrace_cuda_init_ok", "cutrace_check_status", "cutrace_probe_cuinit_seconds", "cutrace_probe_devices",
              "cutrace_driver_info", "cutrace_doctor_findings", "cutrace_job_processes",
              "cutrace_job_failed_processes", "cutrace_job_failure_group_processes", "cutrace_job_hosts"):
        got[q] = query(q)

    def one(q, **labels):
        m = [x for x in got[q] if all(x["metric"].get(k) == v for k, v in labels.items())]
        if len(m) != 1:
            fail("%s%r: %d series" % (q, labels, len(m)), got[q])
        return m[0]

    x = one("cutrace_cuda_init_ok")
    if x["value"][1] != "0" or x["metric"]["layer"] != "device-node" or "nvidia-uvm" not in x["metric"]["cause"]:
        fail("cutrace_cuda_init_ok", x)
    if one("cutrace_check_status")["value"][1] != "1":
        fail("cutrace_check_status", got["cutrace_check_status"])
    if float(one("cutrace_probe_cuinit_seconds")["value"][1]) <= 0:
        fail("cuInit seconds", got["cutrace_probe_cuinit_seconds"])
    if one("cutrace_driver_info")["metric"].get("cuda_driver_version") != "13.0":
        fail("driver info", got["cutrace_driver_info"])
    if one("cutrace_job_processes", state="failed")["value"][1] != "17" or \
            one("cutrace_job_processes", state="healthy")["value"][1] != "47":
        fail("job processes", got["cutrace_job_processes"])
    if one("cutrace_job_failed_processes", layer="resource-manager")["value"][1] != "17":
        fail("failed by layer", got["cutrace_job_failed_processes"])
    g = one("cutrace_job_failure_group_processes")
    if g["value"][1] != "17" or g["metric"]["ranks"] != "8-23,40" or g["metric"]["hosts"] != "node[02-03,06]":
        fail("failure group", g)
    if one("cutrace_job_hosts")["value"][1] != "8":
        fail("hosts", got["cutrace_job_hosts"])
    text = "\n".join("%s %s" % (json.dumps(x["metric"], sort_keys=True), x["value"][1])
                     for q in got for x in got[q])
    if outdir:
        os.makedirs(outdir, exist_ok=True)
        with open(os.path.join(outdir, "prometheus-query.txt"), "w") as f:
            f.write(text + "\n")
    print("ok: Prometheus %s scraped node-exporter's textfile; the query API returned:\n%s" % (
        subprocess.run([prom, "--version"], capture_output=True, text=True).stdout.split("\n")[0], text))
finally:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    shutil.rmtree(work, ignore_errors=True)
