#!/usr/bin/env python3
"""Check a `cutrace show --json` document against tracer/JSON.md.

usage: check_json.py FILE.json SCENARIO   (SCENARIO: fail | ok | dir)
Exits non-zero with a message naming the first problem.
"""
import json
import sys

PROCESS_KEYS = {
    "file": str, "trace_format": str, "pid": int, "ppid": int, "cmdline": list,
    "cmdline_truncated": bool, "uid": int, "gid": int, "euid": int, "egid": int,
    "start_realtime_ns": int, "start_mono_ns": int, "writer_version": int,
    "driver_version_code": int, "devices": list, "env": dict, "notes": list,
    "flags": dict, "events": list, "stats": dict,
}
NULLABLE_STR = ["exe", "cwd", "host", "kernel", "machine", "driver_version",
                "nvidia_version_text", "nvidia_module_version", "inject_rules", "interp",
                "ld_preload_file"]
EVENT_KEYS = {
    "seq": int, "type": str, "call": str, "family": str, "tid": int, "t_ns": int,
    "depth": int, "returned": bool, "has_enter": bool, "target": str, "errno": int,
    "ok": bool, "injected": bool, "record_flags": int, "args": dict,
}
FAMILIES = {"io", "loader", "driver", "runtime", "nvml", "shim", "unknown"}
STATS = ["records", "events", "dropped", "lost", "torn", "overwritten", "malformed",
         "unfinished", "orphan_exits"]


def fail(msg):
    print("check_json: " + msg, file=sys.stderr)
    sys.exit(1)


def need(cond, msg):
    if not cond:
        fail(msg)


def check_types(obj, spec, where):
    for k, t in spec.items():
        need(k in obj, "%s: missing key %r" % (where, k))
        v = obj[k]
        need(isinstance(v, t) and not (t is int and isinstance(v, bool)),
             "%s: %r is %r, want %s" % (where, k, v, t.__name__))


def check_process(p):
    check_types(p, PROCESS_KEYS, "process")
    for k in NULLABLE_STR:
        need(k in p and (p[k] is None or isinstance(p[k], str)), "process: %r" % k)
    for k in ["degraded", "exited", "forked", "inject", "inject_malformed"]:
        need(isinstance(p["flags"].get(k), bool), "flags.%s" % k)
    for k in STATS:
        need(isinstance(p["stats"].get(k), int), "stats.%s" % k)
    v = p.get("verdict")
    need(isinstance(v, dict), "process: verdict")
    for k, t in {"ok": bool, "layer": str, "summary": str, "injected": bool, "contract": dict}.items():
        need(isinstance(v.get(k), t), "verdict.%s" % k)
    need(v["layer"] in {"none", "loader", "device-node", "kernel-handshake", "resource-manager",
                        "uvm", "driver-api", "runtime"}, "verdict.layer")
    need(v["ok"] == (v["layer"] == "none"), "verdict ok vs layer")
    need(p["stats"]["events"] == len(p["events"]), "stats.events != len(events)")
    last = -1
    for e in p["events"]:
        where = "event %r" % e.get("seq")
        check_types(e, EVENT_KEYS, where)
        need(e["seq"] > last, where + ": not in seq order")
        last = e["seq"]
        need(e["family"] in FAMILIES, where + ": family")
        need(e["type"] in ("call", "note"), where + ": type")
        need(e["result"] is None or isinstance(e["result"], int), where + ": result")
        need(e["dur_ns"] is None or isinstance(e["dur_ns"], int), where + ": dur_ns")
        need(e["result_name"] is None or isinstance(e["result_name"], str), where + ": result_name")
        need(e["errno_name"] is None or isinstance(e["errno_name"], str), where + ": errno_name")
        need(e["returned"] == (e["result"] is not None) or e["type"] == "note", where + ": returned")
        if e["call"] == "ioctl":
            for k in ("name", "node"):
                need(isinstance(e.get(k), str), where + ": ioctl " + k)


def by_call(p, call):
    return [e for e in p["events"] if e["call"] == call]


def main():
    doc = json.load(open(sys.argv[1]))
    scenario = sys.argv[2]
    need(isinstance(doc.get("cutrace_version"), str), "cutrace_version")
    need(doc.get("format_version") == "1.0", "format_version")
    need(isinstance(doc.get("processes"), list), "processes")
    need(isinstance(doc.get("errors"), list), "errors")
    need(isinstance(doc.get("summary"), dict) and doc["summary"]["processes"] == len(doc["processes"]), "summary")
    for p in doc["processes"]:
        check_process(p)

    if scenario == "dir":
        need(len(doc["processes"]) == 2, "dir: want 2 processes")
        need(len(doc["errors"]) == 1 and "bad magic" in doc["errors"][0]["error"], "dir: errors")
        return
    need(len(doc["processes"]) == 1, "want 1 process")
    p = doc["processes"][0]
    need(p["pid"] == 4242 and p["ppid"] == 1, "pid/ppid")
    need(p["exe"] == "/opt/test/probe", "exe")
    need(p["cmdline"] == ["./probe", "--with space", "it's"], "cmdline %r" % p["cmdline"])
    need(p["driver_version"] == "580.159.04" and p["driver_version_code"] == 580159004, "driver")
    need(p["env"] == {"CUDA_VISIBLE_DEVICES": "0", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}, "env")
    need(p["devices"] == ["195 nvidia", "238 nvidia-uvm"], "devices")
    cu = by_call(p, "cuInit")
    need(len(cu) == 1 and cu[0]["depth"] == 0, "cuInit")
    ioc = by_call(p, "ioctl")
    need(len(ioc) == 1 and ioc[0]["depth"] == 1, "ioctl depth")
    need(ioc[0]["name"] == "NV_ESC_RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION"
         and ioc[0]["node"] == "nvidiactl", "ioctl name/node")
    need(ioc[0]["target"] == "fd 3 (nvidiactl) req 0xc020462a", "ioctl target")
    need(ioc[0]["args"]["request"] == "0xc020462a", "ioctl args.request")
    dv = by_call(p, "cuDriverGetVersion")
    need(dv[0]["tid"] == 4243 and dv[0]["args"]["version"] == 13000 and dv[0]["ok"], "second thread")
    notes = [e for e in p["events"] if e["type"] == "note"]
    need(len(notes) == 1 and notes[0]["target"] == 'synthetic note "quoted"', "note")
    if scenario == "fail":
        need(p["verdict"]["layer"] == "resource-manager" and p["verdict"]["step"]["call"] == "ioctl", "verdict")
        need(cu[0]["result"] == 100 and cu[0]["result_name"] == "CUDA_ERROR_NO_DEVICE", "cuInit result")
        need(not cu[0]["ok"], "cuInit ok")
        need(ioc[0]["status"] == 0x1f and ioc[0]["status_name"] == "NV_ERR_INVALID_ARGUMENT", "status")
        need(not ioc[0]["ok"] and ioc[0]["result"] == 0, "ioctl ok")
        op = [e for e in by_call(p, "open64") if e["target"] == "/dev/nvidia0"][0]
        need(op["result"] == -1 and op["errno"] == 1 and op["errno_name"] == "EPERM", "open errno")
        need(op["result_name"] == "EPERM" and op["injected"], "open injected")
        need(op["inject"] == {"rule": 0, "action": "error"}, "inject object")
        ng = by_call(p, "cuDeviceGetCount")[0]
        need(not ng["returned"] and ng["result"] is None and ng["dur_ns"] is None, "never returned")
        need(p["stats"]["unfinished"] == 1, "stats.unfinished")
        need(p["flags"]["exited"] is False and p["flags"]["inject"] is True, "flags")
    else:
        need(all(e["ok"] for e in p["events"]), "ok scenario: every event ok")


main()
