#!/usr/bin/env python3
"""Check a `cutrace show --format=chrome` document.

usage: check_chrome.py FILE.json [--expect LIST] [--scenario small|job|fixtures]

Always checked (what Perfetto / chrome://tracing need, and what
tracer/out/show_chrome.c promises):
  - valid JSON: {"traceEvents": [...], "displayTimeUnit": "ns",
    "metadata": {cutrace_version, format_version "1.0", dropped, processes, ...}}
  - every event has ph, ts, pid, tid, name; ph is X, B, E, i or M
  - X events have dur >= 0
  - process_name names every pid used, thread_name every (pid, tid) used;
    no tid is used by two pids (the viewers key threads by tid)
  - per thread, events are in ts order in the file
  - per thread, slices nest: a slice ends inside the one it starts in, an "E"
    closes an open "B", no open "B" outlives the slice around it
    (Perfetto drops slices that break this)
  - failed / never-returned / injected calls are marked in name, cname, args

--expect LIST compares the (ph, name) sequence with a file of "PH<TAB>NAME"
lines ('#' comments; a NAME ending in '*' matches by prefix).
--scenario adds the facts of a known input (see test_chrome.sh).
Exits non-zero with a message naming the first problem.
"""
import json
import sys
from collections import defaultdict

PHASES = {"X", "B", "E", "i", "M"}
INF = float("inf")


def fail(msg):
    print("check_chrome: " + msg, file=sys.stderr)
    sys.exit(1)


def need(cond, msg):
    if not cond:
        fail(msg)


def ns(v):
    """microseconds (float) -> integer nanoseconds, as Perfetto rounds them"""
    return int(round(v * 1000.0))


def check_top(doc):
    need(isinstance(doc, dict), "top level is not an object")
    need(isinstance(doc.get("traceEvents"), list), "no traceEvents array")
    need(doc.get("displayTimeUnit") == "ns", "displayTimeUnit is not 'ns'")
    md = doc.get("metadata")
    need(isinstance(md, dict), "no metadata object")
    need(isinstance(md.get("cutrace_version"), str), "metadata.cutrace_version")
    need(md.get("format_version") == "1.0", "metadata.format_version")
    for k in ("dropped", "processes", "time_base_realtime_ns"):
        need(isinstance(md.get(k), int) and not isinstance(md.get(k), bool), "metadata.%s" % k)
    need(isinstance(md.get("errors"), list), "metadata.errors")


def check_event_fields(i, e):
    where = "event %d %r" % (i, e.get("name"))
    need(isinstance(e, dict), "event %d is not an object" % i)
    for k in ("ph", "ts", "pid", "tid", "name"):
        need(k in e, where + ": no " + k)
    need(e["ph"] in PHASES, where + ": ph %r" % e["ph"])
    need(isinstance(e["ts"], (int, float)) and not isinstance(e["ts"], bool), where + ": ts")
    need(e["ts"] >= 0, where + ": negative ts")
    need(isinstance(e["pid"], int) and isinstance(e["tid"], int), where + ": pid/tid")
    need(isinstance(e["name"], str), where + ": name")
    if e["ph"] == "X":
        need(isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, where + ": dur")
    if e["ph"] == "i":
        need(e.get("s") in ("t", "p", "g"), where + ": instant scope")
    if e["ph"] in ("X", "B"):
        a = e.get("args")
        need(isinstance(a, dict), where + ": args")
        for k in ("call", "target", "result", "result_name", "errno_name", "ok", "failed", "injected"):
            need(k in a, where + ": args." + k)
        need(isinstance(e.get("cat"), str), where + ": cat")
        check_marks(where, e, a)
    return where


def check_marks(where, e, a):
    name = e["name"]
    never = e["ph"] == "B"
    need(a.get("never_returned", False) == never, where + ": never_returned vs ph")
    need(a["failed"] == (not a["ok"]), where + ": failed != not ok")
    if never:
        need(name.startswith("NEVER RETURNED "), where + ": never returned, not named so")
        need(a["result"] is None, where + ": never returned with a result")
    elif a["failed"]:
        need(name.startswith("FAILED "), where + ": failed, not named FAILED")
    else:
        need(not name.startswith(("FAILED ", "NEVER RETURNED ")), where + ": ok but named as failed")
    need(("INJECTED " in name) == a["injected"], where + ": INJECTED mark vs args.injected")
    if a["failed"] or never:
        need(e.get("cname") == "terrible", where + ": failure without cname terrible")
    elif a["injected"]:
        need(e.get("cname") == "bad", where + ": injected without cname bad")
    else:
        need("cname" not in e, where + ": ok call coloured")
    if a["call"] == "ioctl":
        need(isinstance(a.get("ioctl"), str) and a["ioctl"], where + ": ioctl without a decoded name")
        need(isinstance(a.get("node"), str), where + ": ioctl without node")
        if a.get("nv_family") not in (None, "not-nvidia"):
            need(not name.split(" ")[-1].startswith("ioctl"), where + ": NVIDIA ioctl named ioctl")


def check_threads(evs):
    """names, tid ownership, order and nesting per thread"""
    proc_named, thr_named, used_pids, used_thr = set(), set(), set(), set()
    owner = {}
    for e in evs:
        if e["ph"] == "M":
            if e["name"] == "process_name":
                need(e["pid"] not in proc_named, "pid %d named twice" % e["pid"])
                need(isinstance(e.get("args", {}).get("name"), str), "process_name without args.name")
                proc_named.add(e["pid"])
            elif e["name"] == "thread_name":
                need((e["pid"], e["tid"]) not in thr_named, "thread %r named twice" % ((e["pid"], e["tid"]),))
                need(isinstance(e.get("args", {}).get("name"), str), "thread_name without args.name")
                thr_named.add((e["pid"], e["tid"]))
            continue
        used_pids.add(e["pid"])
        used_thr.add((e["pid"], e["tid"]))
    for e in evs:
        o = owner.setdefault(e["tid"], e["pid"])
        need(o == e["pid"], "tid %d is used by pids %d and %d" % (e["tid"], o, e["pid"]))
    need(used_pids <= proc_named, "pids without process_name: %r" % sorted(used_pids - proc_named))
    need(used_thr <= thr_named, "threads without thread_name: %r" % sorted(used_thr - thr_named))

    last = {}
    stacks = defaultdict(list)  # per thread: [end_ns, name, ph]
    for i, e in enumerate(evs):
        key = (e["pid"], e["tid"])
        t = ns(e["ts"])
        need(t >= last.get(key, t), "event %d %r: ts goes back on thread %r" % (i, e["name"], key))
        last[key] = t
        if e["ph"] == "M":
            continue
        st = stacks[key]
        where = "event %d %r" % (i, e["name"])
        if e["ph"] == "E":
            while st and st[-1][0] <= t:
                st.pop()
            need(st and st[-1][2] == "B", where + ": E without an open B on top")
            need(st[-1][1] == e["name"], where + ": E name differs from its B %r" % st[-1][1])
            st.pop()
            need(not st or st[-1][0] >= t, where + ": B closed after its parent ended")
            continue
        while st and st[-1][0] <= t:
            st.pop()
        need(all(s[0] > t for s in st), where + ": starts after the end of a slice below an open B")
        end = t + ns(e["dur"]) if e["ph"] == "X" else (INF if e["ph"] == "B" else t)
        # a B's end is checked when its E comes (or at the end of the trace)
        if st and e["ph"] != "B":
            need(end <= st[-1][0], where + ": ends after the slice it starts in (%r)" % st[-1][1])
        if e["ph"] in ("X", "B"):
            st.append([end, e["name"], e["ph"]])
    # B slices left open run to the end of the trace: nothing under them may have ended
    for key, st in stacks.items():
        for k, s in enumerate(st):
            if s[2] == "B":
                need(all(below[0] == INF for below in st[:k]),
                     "thread %r: %r never closed inside a slice that ended" % (key, s[1]))


def check_expect(evs, path):
    want = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        ph, name = line.split("\t", 1)
        want.append((ph, name))
    got = [(e["ph"], e["name"]) for e in evs]
    for k, (w, g) in enumerate(zip(want, got)):
        ok = w[0] == g[0] and (g[1].startswith(w[1][:-1]) if w[1].endswith("*") else g[1] == w[1])
        need(ok, "event %d is %r, expected %r" % (k, g, w))
    need(len(got) == len(want), "%d events, expected %d" % (len(got), len(want)))


def base_name(name):
    """the name without the FAILED / NEVER RETURNED / INJECTED marks"""
    for mark in ("FAILED ", "NEVER RETURNED ", "INJECTED "):
        if name.startswith(mark):
            name = name[len(mark):]
    return name


def by_name(evs, prefix):
    return [e for e in evs if e["name"].startswith(prefix)]


def scenario_small(doc, evs):
    md = doc["metadata"]
    need(md["processes"] == 1 and md["dropped"] == 0, "small: metadata %r" % md)
    pn = by_name(evs, "process_name")[0]["args"]["name"]
    need(pn == "python3 (pid 4242, host h1, rank 3)", "small: process name %r" % pn)
    tn = sorted(e["args"]["name"] for e in by_name(evs, "thread_name"))
    need(tn == ["main", "thread 4243"], "small: thread names %r" % tn)
    op = [e for e in evs if e["name"] == "FAILED INJECTED open64"][0]
    a = op["args"]
    need(a["target"] == "/dev/nvidia0" and a["errno_name"] == "EPERM" and a["result"] == -1, "small: open %r" % a)
    need(a["inject_action"] == "error" and a["inject_rule"] == 0, "small: inject %r" % a)
    need(op["cat"] == "io" and op["dur"] == 1.0, "small: open cat/dur")
    rm = [e for e in evs if e["name"] == "FAILED RM_CONTROL NV0000_CTRL_CMD_GPU_ATTACH_IDS"][0]["args"]
    need(rm["status"] == 0x1b and rm["status_name"] == "NV_ERR_INSUFFICIENT_PERMISSIONS", "small: status %r" % rm)
    need(rm["rm_control_cmd"] == "0x215" and rm["ioctl"] == "NV_ESC_RM_CONTROL" and rm["node"] == "nvidiactl",
         "small: rm %r" % rm)
    need(rm["fields"].get("block_in_bytes") == 32 and "block_in" not in rm["fields"], "small: raw block %r" % rm["fields"])
    ci = [e for e in evs if e["name"] == "FAILED cuInit"][0]
    need(ci["args"]["result_name"] == "CUDA_ERROR_UNKNOWN" and ci["cat"] == "driver", "small: cuInit")
    # the lost-exit UVM ioctl is closed exactly at cuInit's end
    b = [e for e in evs if e["ph"] == "B" and "UVM_INITIALIZE" in e["name"]][0]
    end = [e for e in evs if e["ph"] == "E"][0]
    need(ns(end["ts"]) == ns(ci["ts"]) + ns(ci["dur"]), "small: E not at cuInit's end")
    need(b["args"]["node"] == "nvidia-uvm" and b["args"]["nv_family"] == "uvm", "small: uvm %r" % b["args"])
    inj = [e for e in evs if e["name"] == "INJECTED cuDriverGetVersion"][0]
    need(inj["tid"] == 4243 and inj["args"]["ok"], "small: injected value")
    orphan = [e for e in evs if e["name"] == "cuDeviceGet"][0]
    need(orphan["dur"] == 0 and orphan["args"].get("enter_lost") is True, "small: orphan exit")
    note = [e for e in evs if e["ph"] == "i" and e["name"].startswith("note")][0]
    need(note["s"] == "t" and note["args"]["text"] == "synthetic note", "small: note")
    v = by_name(evs, "VERDICT")[0]
    need(v["s"] == "p" and v["args"]["verdict"]["ok"] is False and v["cname"] == "terrible", "small: verdict")
    need(ns(v["ts"]) >= max(ns(e["ts"]) for e in evs if e["ph"] != "M"), "small: verdict not at the end")
    lab = by_name(evs, "process_labels")[0]["args"]["labels"]
    need(lab.startswith("FAILED: "), "small: label %r" % lab)
    need(ns(evs[0]["ts"]) == 166400000000 * 1000, "small: time base (process start at ts %r)" % evs[0]["ts"])
    need(md["time_base_realtime_ns"] == 1699833600 * 10**9, "small: time_base_realtime_ns")


def procs(evs):
    return {e["args"]["name"]: e["pid"] for e in by_name(evs, "process_name")}


def scenario_job(doc, evs):
    md = doc["metadata"]
    need(md["processes"] == 3 and md["dropped"] == 7, "job: metadata %r" % md)
    need(md["processes_failed"] == 1, "job: processes_failed")
    need(len(md["errors"]) == 1 and md["errors"][0]["file"].endswith("bad.cutrace"), "job: errors %r" % md["errors"])
    p = procs(evs)
    names = sorted(p)
    need(names == ["python3 (pid 4242, host h1, rank 0)", "python3 (pid 4242, host h2, rank 1)",
                   "python3 (pid 5000, host h3, rank 2)"], "job: process names %r" % names)
    need(len(set(p.values())) == 3, "job: pids not distinct %r" % p)
    need(p["python3 (pid 4242, host h1, rank 0)"] == 4242, "job: first process kept its pid")
    # the real ids stay in args
    for e in evs:
        if e["ph"] == "X":
            need(e["args"]["real_pid"] in (4242, 5000), "job: real_pid")
    # one time axis: b started 2.5 s before a, c 1 us after a
    ci = {e["pid"]: ns(e["ts"]) for e in evs if e["ph"] == "X" and e["args"]["call"] == "cuInit"}
    a, b, c = (p[n] for n in names)
    need(ci[b] - ci[a] == -2500000000, "job: b's cuInit %d ns from a's" % (ci[b] - ci[a]))
    need(ci[c] - ci[a] == 1000, "job: c's cuInit %d ns from a's" % (ci[c] - ci[a]))
    lab = {e["pid"]: e["args"]["labels"] for e in by_name(evs, "process_labels")}
    need(lab[a] == "OK" and lab[b].startswith("FAILED") and lab[c] == "OK", "job: labels %r" % lab)


def scenario_fixtures(doc, evs):
    md = doc["metadata"]
    need(md["processes"] == 3 and md["errors"] == [], "fixtures: metadata %r" % md)
    p = procs(evs)
    need(len(p) == 3 and len(set(p.values())) == 3, "fixtures: pids %r" % p)
    calls = [e for e in evs if e["ph"] in ("X", "B")]
    # t1: open of /dev/nvidia-uvm denied by an injected EPERM
    uvm = [e for e in calls if e["args"]["call"].startswith("open") and e["args"]["target"] == "/dev/nvidia-uvm"
           and e["args"]["failed"]]
    need(uvm, "fixtures: no failed open of /dev/nvidia-uvm")
    for e in uvm:
        a = e["args"]
        need(a["injected"] and a["errno_name"] == "EPERM" and e["name"].startswith("FAILED INJECTED open"),
             "fixtures: uvm open %r %r" % (e["name"], a))
        need(e["cname"] == "terrible", "fixtures: uvm open colour")
    io = [e for e in calls if e["args"]["call"] == "ioctl"]
    need(len(io) > 500, "fixtures: only %d ioctls" % len(io))
    nv = [e for e in io if e["args"].get("nv_family") not in (None, "not-nvidia")]
    need(len(nv) * 10 >= len(io) * 9, "fixtures: %d of %d ioctls decoded as NVIDIA" % (len(nv), len(io)))
    for prefix in ("RM_CONTROL NV0000_CTRL_CMD_", "RM_ALLOC ", "CARD_INFO", "UVM_INITIALIZE", "UVM_REGISTER_GPU"):
        need(any(base_name(e["name"]).startswith(prefix) for e in nv), "fixtures: no ioctl named %s..." % prefix)
    # every process has the verdict; probe and torch are healthy, t1 is not
    verdicts = {e["pid"]: e for e in by_name(evs, "VERDICT")}
    need(set(verdicts) == set(p.values()), "fixtures: verdict per process")
    ok = sorted(v["args"]["verdict"]["ok"] for v in verdicts.values())
    need(ok == [False, True, True], "fixtures: verdicts %r" % ok)
    # the main thread of each is named so
    mains = sorted(e["pid"] for e in by_name(evs, "thread_name") if e["args"]["name"] == "main" and e["tid"] == e["pid"])
    need(mains == sorted(p.values()), "fixtures: main threads %r" % mains)


def main():
    args = sys.argv[1:]
    need(args, __doc__)
    path = args.pop(0)
    expect = scenario = None
    while args:
        a = args.pop(0)
        if a == "--expect":
            expect = args.pop(0)
        elif a == "--scenario":
            scenario = args.pop(0)
        else:
            fail("unknown argument %r" % a)
    try:
        doc = json.load(open(path))
    except ValueError as e:
        fail("%s: not valid JSON: %s" % (path, e))
    check_top(doc)
    evs = doc["traceEvents"]
    for i, e in enumerate(evs):
        check_event_fields(i, e)
    check_threads(evs)
    if expect:
        check_expect(evs, expect)
    if scenario:
        {"small": scenario_small, "job": scenario_job, "fixtures": scenario_fixtures}[scenario](doc, evs)
    print("check_chrome: %s: %d events ok" % (path, len(evs)))


if __name__ == "__main__":
    main()
