#!/usr/bin/env bash
# End-to-end `cutrace show`: synthetic traces (ct_mksynth) through the built
# CLI, JSON validated with python3 -m json.tool and check_json.py, the text
# timeline's marks, exit codes and error lines.
#
# usage: test_show.sh CUTRACE MKSYNTH [FIXTURE_DIR]
set -u
cutrace=$1
mksynth=$2
fixtures=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/ct_show_XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# expect RC CMD...: run, keep stdout/stderr in $work/out, $work/err
expect() {
	local want=$1; shift
	"$@" >"$work/out" 2>"$work/err"
	local rc=$?
	[ "$rc" -eq "$want" ] || fail "'$*' exited $rc, want $want: $(head -3 "$work/err")"
}
has() { grep -qF -- "$2" "$1" || fail "$1 lacks '$2'"; }
hasnt() { ! grep -qF -- "$2" "$1" || fail "$1 has '$2'"; }

"$mksynth" "$work/fail.cutrace" fail || { echo "mksynth failed"; exit 1; }
"$mksynth" "$work/ok.cutrace" ok || { echo "mksynth failed"; exit 1; }

# --- JSON -------------------------------------------------------------------
expect 1 "$cutrace" show --json "$work/fail.cutrace"
cp "$work/out" "$work/fail.json"
python3 -m json.tool "$work/fail.json" >/dev/null || fail "fail.json is not valid JSON"
python3 "$here/check_json.py" "$work/fail.json" fail || fail "fail.json schema"
[ -s "$work/err" ] && fail "stderr not empty: $(cat "$work/err")"

expect 0 "$cutrace" show --format=json -o "$work/ok.json" "$work/ok.cutrace"
[ -s "$work/out" ] && fail "-o: stdout not empty"
python3 -m json.tool "$work/ok.json" >/dev/null || fail "ok.json is not valid JSON"
python3 "$here/check_json.py" "$work/ok.json" ok || fail "ok.json schema"

# --- text ------------------------------------------------------------------
expect 1 "$cutrace" show --no-time --pids --color=never "$work/fail.cutrace"
t="$work/out"
has "$t" "process 4242 (ppid 1)  /opt/test/probe"
has "$t" "  command  ./probe '--with space' 'it'\\''s'"
has "$t" "  driver   580.159.04  (NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@))"
has "$t" "  env      CUDA_VISIBLE_DEVICES=0"
has "$t" "no exit seen (killed, crashed, or still running)"
has "$t" "fault injection active"
has "$t" 'cuInit(flags=0x0) = CUDA_ERROR_NO_DEVICE (100)  FAILED'
has "$t" '  open64("/dev/nvidiactl", O_RDWR|O_CLOEXEC) = 3  (nvidiactl 195:255)'
has "$t" '  ioctl(3 (nvidiactl), NV_ESC_RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION) = 0  -> NV_ERR_INVALID_ARGUMENT'
has "$t" '  verdict  FAILED  layer resource-manager'
has "$t" '  why      the kernel driver'"'"'s resource manager failed: RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION -> NV_ERR_INVALID_ARGUMENT'
has "$t" '  open64("/dev/nvidia0", O_RDWR|O_CLOEXEC) = -1 EPERM (Operation not permitted)  [injected: rule 0, error]  FAILED'
has "$t" '  ** note: synthetic note "quoted"'
has "$t" '[4243] cuDriverGetVersion() = CUDA_SUCCESS  -> version 13000'
has "$t" 'cuDeviceGetCount() = ?  NEVER RETURNED'
has "$t" '-- 8 events (14 records): 3 failed, 1 never returned'
grep -v '^  step \|^  then ' "$t" >"$work/out.timeless"
hasnt "$work/out.timeless" ' ms '
hasnt "$t" $'\033'
# with time: offsets and durations
expect 1 "$cutrace" show --color=never "$work/fail.cutrace"
grep -qE '^ +\+0\.000 ms  dlopen\("libcuda.so.1", RTLD_NOW\) = 0x55d0c0a0 .*<1\.0 us>$' "$work/out" \
	|| fail "timed dlopen line: $(grep dlopen "$work/out")"
# colour on demand
expect 1 "$cutrace" show --no-time --pids --color=always "$work/fail.cutrace"
grep -qF $'\033[31mFAILED' "$work/out" || fail "--color=always: no red FAILED"

# --- directories and bad input ---------------------------------------------------
mkdir "$work/d"
cp "$work/fail.cutrace" "$work/d/a.cutrace"
cp "$work/ok.cutrace" "$work/d/c.cutrace"
head -c 1000 /dev/zero | tr '\0' x >"$work/d/b.cutrace"  # big enough for a header
touch "$work/d/ignored.txt"
expect 1 "$cutrace" show --json "$work/d"
python3 "$here/check_json.py" "$work/out" dir || fail "dir JSON"
has "$work/err" "cutrace: warning: $work/d/b.cutrace: not a cutrace trace file (bad magic) (skipped)"

expect 2 "$cutrace" show "$work/d/b.cutrace"
has "$work/err" "cutrace: $work/d/b.cutrace: not a cutrace trace file (bad magic)"
: >"$work/zero.cutrace"
expect 2 "$cutrace" show --json "$work/zero.cutrace"
has "$work/err" "cutrace: $work/zero.cutrace: empty file (0 bytes)"
head -c 4096 "$work/fail.cutrace" >"$work/trunc.cutrace"
expect 2 "$cutrace" show "$work/trunc.cutrace"
has "$work/err" "truncated: header says 1048576 bytes, file has 4096"
mkdir "$work/empty"
expect 2 "$cutrace" show "$work/empty"
has "$work/err" "cutrace: no trace files (*.cutrace, *.cutrace.gz, *.cutrace.zst) in $work/empty"
expect 2 "$cutrace" show "$work/missing"
has "$work/err" "cutrace: $work/missing: No such file or directory"
mkdir "$work/allbad"
cp "$work/d/b.cutrace" "$work/allbad/x.cutrace"
expect 2 "$cutrace" show "$work/allbad"

# --- usage -------------------------------------------------------------------
expect 0 "$cutrace" show --help
has "$work/out" "usage: cutrace show"
expect 2 "$cutrace" show
expect 2 "$cutrace" show --bogus "$work/fail.cutrace"
has "$work/err" "unknown option '--bogus'"
expect 2 "$cutrace" show --format=xml "$work/fail.cutrace"
expect 1 "$cutrace" show --format=chrome -o "$work/c.json" "$work/fail.cutrace"
python3 -m json.tool "$work/c.json" >/dev/null || fail "chrome output is not valid JSON"
expect 2 "$cutrace" show --color=sometimes "$work/fail.cutrace"
expect 2 "$cutrace" show -o /nonexistent-dir/x.json "$work/fail.cutrace"

# --- real traces (H200, driver 580.159.04) -----------------------------------------
if [ -n "$fixtures" ] && [ -d "$fixtures" ] && command -v gzip >/dev/null; then
	mkdir "$work/fx"
	for f in probe i01 i06 c1 torch; do
		gzip -dc "$fixtures/$f.cutrace.gz" >"$work/fx/$f.cutrace" || fail "gunzip $f"
	done
	expect 1 "$cutrace" show --json "$work/fx"
	python3 -m json.tool "$work/out" >/dev/null || fail "fixtures: invalid JSON"
	python3 - "$work/out" <<'PY' || fail "fixture facts"
import json, sys
doc = json.load(open(sys.argv[1]))
p = {x["file"].rsplit("/", 1)[1].split(".")[0]: x for x in doc["processes"]}
def cuinit(name):
    return [e for e in p[name]["events"] if e["call"] == "cuInit" and e["depth"] == 0][0]
assert len(p) == 5 and doc["errors"] == [], p.keys()
assert all(x["driver_version"] == "580.159.04" for x in p.values())
assert cuinit("probe")["result"] == 0 and cuinit("probe")["ok"]
assert cuinit("i01")["result_name"] == "CUDA_ERROR_NO_DEVICE"
assert cuinit("c1")["result_name"] == "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"
bad = [e for e in p["i06"]["events"] if e.get("status") == 0x1a]
assert bad and bad[0]["name"] == "UVM_REGISTER_GPU" and bad[0]["injected"] and not bad[0]["ok"], bad
v = {k: x["verdict"] for k, x in p.items()}
assert v["probe"]["ok"] and v["torch"]["ok"] and v["probe"]["layer"] == "none", v["probe"]
assert v["i01"]["layer"] == "device-node" and v["i01"]["step"]["call"] == "open64" and v["i01"]["injected"], v["i01"]
assert v["i06"]["layer"] == "uvm" and v["i06"]["final"]["code"] == 3, v["i06"]
assert v["c1"]["layer"] == "kernel-handshake" and v["c1"]["final"]["code"] == 803, v["c1"]
assert v["c1"]["contract"]["libcuda_kind"] == "compat", v["c1"]
assert doc["summary"]["processes"] == 5 and doc["summary"]["healthy"] == 2 and doc["summary"]["failed"] == 3, doc["summary"]
for x in p.values():
    s = x["stats"]
    assert s["torn"] == s["overwritten"] == s["malformed"] == s["orphan_exits"] == 0, s
    assert s["records"] == 2 * s["events"] - s["unfinished"] - sum(e["type"] == "note" for e in x["events"]), s
PY
	# format 1.1 traces of GPU run 2: torchrun with 4 ranks, rank 2 denied
	# /dev/nvidia-uvm; a torch process killed while held in the driver; a
	# context refused with CUDA_ERROR_DEVICES_UNAVAILABLE
	mkdir "$work/tr4"
	for f in "$fixtures"/torchrun4/*.gz; do
		gzip -dc "$f" >"$work/tr4/$(basename "$f" .gz)" || fail "gunzip $f"
	done
	gzip -dc "$fixtures/hang-torch.cutrace.gz" >"$work/hang.cutrace" || fail "gunzip hang"
	gzip -dc "$fixtures/busy-ctx.cutrace.gz" >"$work/busy.cutrace" || fail "gunzip busy"
	expect 1 "$cutrace" show "$work/tr4"
	has "$work/out" "5 processes traced: 4 healthy, 1 failed"
	has "$work/out" "1 process: host vm rank 2 pid 2024"
	expect 1 "$cutrace" show --json "$work/tr4"
	python3 - "$work/out" <<'PY' || fail "torchrun4 facts"
import json, sys
doc = json.load(open(sys.argv[1]))
g = doc["summary"]["groups"]
assert len(g) == 1 and g[0]["layer"] == "device-node" and [m["rank"] for m in g[0]["members"]] == [2], g
for x in doc["processes"]:
    s = x["stats"]
    assert s["torn"] == s["overwritten"] == s["malformed"] == s["unfinished"] == s["dropped"] == 0, s
    assert s["records"] == 2 * s["events"] - sum(e["type"] == "note" for e in x["events"]), s
    ts = [e["t_ns"] for e in x["events"]]
    assert ts == sorted(ts), "events in time order"
PY
	expect 1 "$cutrace" show --json "$work/hang.cutrace"
	python3 - "$work/out" <<'PY' || fail "hang facts"
import json, sys
v = json.load(open(sys.argv[1]))["processes"][0]["verdict"]
assert v["hung"] and not v["ok"] and v["step"]["call"] == "cudaGetDeviceCount", v
PY
	expect 1 "$cutrace" show --json "$work/busy.cutrace"
	python3 - "$work/out" <<'PY' || fail "busy facts"
import json, sys
v = json.load(open(sys.argv[1]))["processes"][0]["verdict"]
assert v["layer"] == "driver-api" and v["final"]["code"] == 46 and v["step"]["call"] == "cuDevicePrimaryCtxRetain", v
PY
	expect 1 "$cutrace" show --no-time --pids "$work/fx/i01.cutrace"
	has "$work/out" 'cuInit(flags=0x0) = CUDA_ERROR_NO_DEVICE (100)  FAILED'
	has "$work/out" '  open64("/dev/nvidiactl", O_RDWR) = -1 EACCES (Permission denied)  [injected: rule 0, error]  FAILED'
fi

# --- a job summary in ranges: 64 ranks on 8 hosts, 17 failed ----------------------
"$mksynth" --job "$work/job" 64 8 $(seq 8 23) 40 || fail "mksynth --job"
expect 1 "$cutrace" show --no-time --pids "$work/job"
head -4 "$work/out" >"$work/head"
has "$work/head" "64 processes traced: 47 healthy, 17 failed"
has "$work/head" "  ranks 0-63 on 8 hosts node[01-08]"
has "$work/head" "    17 processes: ranks 8-23,40 on 3 hosts node[02-03,06], pids 100008-100023,100040"
# the same job as Prometheus metrics
expect 1 "$cutrace" show --format=prometheus "$work/job"
has "$work/out" '# TYPE cutrace_job_processes gauge'
has "$work/out" 'cutrace_job_processes{state="healthy"} 47'
has "$work/out" 'cutrace_job_processes{state="failed"} 17'
has "$work/out" 'cutrace_job_failed_processes{layer="resource-manager"} 17'
has "$work/out" 'cutrace_job_failed_processes{layer="uvm"} 0'
has "$work/out" 'cutrace_job_hosts 8'
has "$work/out" 'injected="0",ranks="8-23,40",hosts="node[02-03,06]"} 17'
# a small group is still listed process by process
"$mksynth" --job "$work/job2" 6 3 5 || fail "mksynth --job"
expect 1 "$cutrace" show --no-time --pids "$work/job2"
has "$work/out" "  ranks 0-5 on 3 hosts node[01-03]"
has "$work/out" "    1 process: host node03 rank 5 pid 100005"

# --- 4096 processes: summary in ranges, memory bounded -----------------------------
# peak RSS of show over 4096 traces against the same over 8, in this test: the
# growth is what the summary keeps per process (~5 KiB), never the traces.
# 256 KiB files keep the test short; scripts/bench.sh job reads 16 MiB ones
# (there: 21 MiB peak for 4096, as here)
if [ -x /usr/bin/time ]; then
	"$mksynth" --job "$work/big" 4096 64 7 1024 1025 $(seq 2048 2111) ||
		fail "mksynth --job 4096"
	"$mksynth" --job "$work/small" 8 2 7 || fail "mksynth --job 8"
	/usr/bin/time -f %M -o "$work/rss.small" "$cutrace" show --summary "$work/small" >/dev/null 2>&1
	/usr/bin/time -f %M -o "$work/rss.big" "$cutrace" show --summary "$work/big" >"$work/out" 2>&1
	has "$work/out" "4096 processes traced: 4029 healthy, 67 failed"
	has "$work/out" "  ranks 0-4095 on 64 hosts node[01-64]"
	has "$work/out" "    67 processes: ranks 7,1024-1025,2048-2111 on 3 hosts node[01,17,33]"
	small=$(tail -1 "$work/rss.small") big=$(tail -1 "$work/rss.big")
	echo "4096 traces: peak RSS $big KiB, 8 traces: $small KiB"
	# bound: 8 KiB a process (two pages; each trace is 256 KiB); not under
	# ASan, whose quarantine keeps freed blocks (104 MiB more at 4096)
	if [ -n "${CUTRACE_TEST_SANITIZED:-}" ]; then
		echo "skip: the memory bound under a sanitizer (its allocator inflates peak RSS)"
	elif [ "$((big - small))" -gt $((4096 * 8)) ]; then
		fail "peak RSS grew by $((big - small)) KiB from 8 to 4096 traces (bound $((4096 * 8)) KiB)"
	fi
	rm -rf "$work/big" "$work/small"
else
	echo "skip: 4096-process memory check (no /usr/bin/time)"
fi

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "all show checks passed"
