#!/usr/bin/env bash
# End-to-end `cutrace show --format=chrome`: synthetic traces (ct_mkchrome)
# and the real H200 fixtures through the built CLI, each output checked by
# check_chrome.py (structure, per-thread order and nesting, names, marks).
#
# usage: test_chrome.sh CUTRACE MKCHROME [FIXTURE_DIR [sanitized|plain]]
# (a sanitized cutrace skips the memory check: ASan's allocator keeps freed
# memory in quarantine, so its RSS grows with the work by design)
set -u
cutrace=$1
mk=$2
fixtures=${3:-}
sanitized=${4:-plain}
here=$(cd "$(dirname "$0")" && pwd)
check="$here/check_chrome.py"
work=$(mktemp -d /tmp/ct_chrome_XXXXXX)
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

# --- one process, every kind of event ------------------------------------------------
"$mk" small "$work/small.cutrace" || { echo "ct_mkchrome failed"; exit 1; }
# exit 1: the process's CUDA start-up failed (the diagnosis says so)
expect 1 "$cutrace" show --format=chrome -o "$work/small.json" "$work/small.cutrace"
[ -s "$work/out" ] && fail "-o: stdout not empty"
[ -s "$work/err" ] && fail "stderr not empty: $(cat "$work/err")"
python3 "$check" "$work/small.json" --expect "$here/small.expected" --scenario small || fail "small.json"
# the same document on standard output, with the --format VALUE spelling
expect 1 "$cutrace" show --format chrome "$work/small.cutrace"
cmp -s "$work/out" "$work/small.json" || fail "stdout output differs from -o output"

# --- a job: several processes, colliding pids and tids, a bad file ----------------------
mkdir "$work/job"
"$mk" job "$work/job" || { echo "ct_mkchrome job failed"; exit 1; }
head -c 5000 /dev/zero | tr '\0' x >"$work/job/bad.cutrace"
expect 1 "$cutrace" show --format=chrome -o "$work/job.json" "$work/job"
has "$work/err" "bad.cutrace: not a cutrace trace file (bad magic) (skipped)"
python3 "$check" "$work/job.json" --scenario job || fail "job.json"

# --- streaming: memory does not grow with the trace ----------------------------------
"$mk" many "$work/m1.cutrace" 1000 && "$mk" many "$work/m2.cutrace" 30000 || fail "ct_mkchrome many"
if [ "$sanitized" = sanitized ]; then
	"$cutrace" show --format=chrome -o "$work/m2.json" "$work/m2.cutrace" || fail "m2: chrome export"
	echo "skip: memory check (sanitized build)"
else
python3 - "$cutrace" "$work" <<'PY' || fail "memory grows with the trace"
import resource, subprocess, sys
cutrace, work = sys.argv[1], sys.argv[2]
def rss(name):
    # maxrss of one child: run each in its own python so the numbers are separate
    code = ("import resource,subprocess,sys; r=subprocess.run(sys.argv[1:]);"
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, cutrace, "show", "--format=chrome", "-o",
                          "%s/%s.json" % (work, name), "%s/%s.cutrace" % (work, name)],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "0", out
    return int(out[1])
small, big = rss("m1"), rss("m2")
print("maxrss KB: 1000 calls %d, 30000 calls %d" % (small, big))
assert big - small < 4096, (small, big)
PY
fi
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["traceEvents"]) == 60007' \
	"$work/m2.json" || fail "m2.json: wrong event count or invalid JSON"

# --- bad input and usage --------------------------------------------------------------
expect 2 "$cutrace" show --format=chrome -o "$work/bad.json" "$work/job/bad.cutrace"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["traceEvents"] == [] and len(d["metadata"]["errors"]) == 1' \
	"$work/bad.json" || fail "nothing readable: not a valid empty trace"
expect 2 "$cutrace" show --format=chrome -o /nonexistent-dir/x.json "$work/small.cutrace"
has "$work/err" "/nonexistent-dir/x.json"

# --- real traces (H200, driver 580.159.04) ---------------------------------------------
if [ -n "$fixtures" ] && [ -d "$fixtures" ] && command -v gzip >/dev/null; then
	mkdir "$work/fx"
	for f in probe torch t1; do
		gzip -dc "$fixtures/$f.cutrace.gz" >"$work/fx/$f.cutrace" || fail "gunzip $f"
	done
	# t1 (torch with /dev/nvidia-uvm denied) failed: exit 1
	expect 1 "$cutrace" show --format=chrome -o "$work/fx.json" "$work/fx"
	python3 "$check" "$work/fx.json" --scenario fixtures || fail "fixtures"
	expect 0 "$cutrace" show --format=chrome -o "$work/probe.json" "$work/fx/probe.cutrace"
	python3 "$check" "$work/probe.json" || fail "probe.json"
else
	echo "fixtures not found: real-trace checks skipped"
fi

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "all chrome checks passed"
