#!/usr/bin/env bash
# rel_crash: the trace survives SIGKILL, SIGSEGV, abort() and _exit() at
# random points of a busy 8-thread tracing loop (rel_busy through the real
# shim and the rig's fake kernel).  rel_check then proves, call by call, that
# every completed call is in the trace with enter and exit, that the calls in
# flight show as never returned, that nothing is invented or doubled, and
# that torn records are counted; `cutrace show` must read every file (text
# and JSON, exit 0 or 1) and report the torn count it saw.
#   crash.sh [TRIALS_PER_MODE]
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
trials=${1:-6}
threads=8 iters=1500
tot_torn=0 tot_inflight=0 tot_runs=0

check_one() { # NAME DIR WANT_RC RC [--hang]
	local name=$1 d=$2 want=$3 rc=$4 extra=${5:-} tr out torn inflight
	if [ "$rc" != "$want" ]; then
		bad "$name: exit status $rc, want $want ($(head -c 200 "$d/err"))"
		return
	fi
	if ! tr=$(one_trace "$d"); then
		bad "$name: want one trace file in $d, found $(ls "$d" | tr '\n' ' ')"
		return
	fi
	if ! out=$("$REL_CHECK" busy "$tr" "$d/done" $extra); then
		bad "$name: $(echo "$out" | head -6 | tr '\n' '|')"
		return
	fi
	torn=$(echo "$out" | sed -n 's/.* torn=\([0-9]*\).*/\1/p')
	inflight=$(echo "$out" | sed -n 's/^inflight=\([0-9]*\).*/\1/p')
	"$CUTRACE" show --no-time "$tr" > "$d/show.txt" 2> "$d/show.err"
	local src=$?
	"$CUTRACE" show --json "$tr" > "$d/show.json" 2>> "$d/show.err"
	local jrc=$?
	if [ $src -gt 1 ] || [ $jrc -gt 1 ]; then
		bad "$name: cutrace show exited $src (text) / $jrc (json): $(head -c 200 "$d/show.err")"
		return
	fi
	if ! "$PYTHON3" - "$d/show.json" "$torn" "$inflight" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
p = doc["processes"][0]
torn, inflight = int(sys.argv[2]), int(sys.argv[3])
never = sum(1 for e in p["events"] if e["type"] == "call" and e["has_enter"] and not e["returned"])
if p["stats"]["torn"] != torn:
    sys.exit("json torn %d, checker %d" % (p["stats"]["torn"], torn))
if never != inflight:
    sys.exit("json shows %d calls that never returned, checker %d" % (never, inflight))
PY
	then
		bad "$name: cutrace show --json disagrees with the checker"
		return
	fi
	if [ "$torn" -gt 0 ] && ! grep -q "$torn torn" "$d/show.txt"; then
		bad "$name: $torn torn record(s), not reported by cutrace show"
		return
	fi
	if [ "$inflight" -gt 0 ] && ! grep -q "NEVER RETURNED" "$d/show.txt"; then
		bad "$name: calls in flight not shown as NEVER RETURNED"
		return
	fi
	tot_torn=$((tot_torn + torn)) tot_inflight=$((tot_inflight + inflight)) tot_runs=$((tot_runs + 1))
	ok "$name: $(echo "$out" | tr '\n' ' ' | cut -c1-170)"
}

run_busy() { # DIR ARGS...: rel_busy under the shim, cores off
	local d=$1
	shift
	mkdir -p "$d"
	(ulimit -c 0; exec env CUTRACE_DIR="$d" CUTRACE_SIZE=64M LD_PRELOAD="$SHIM_PRELOAD" \
		"$REL_BIN/rel_busy" -t $threads -n $iters -d "$d/done" "$@") > "$d/out" 2> "$d/err"
}

for mode in segv abort exit kill; do
	case $mode in segv) want=139 ;; abort) want=134 ;; exit) want=3 ;; kill) want=137 ;; esac
	for s in $(seq 1 "$trials"); do
		d=$T/$mode-$s
		run_busy "$d" -c $mode -s $((s * 7919 + ${#mode}))
		check_one "$mode seed $s" "$d" $want $?
	done
done

# SIGKILL from outside, at a random time
for s in $(seq 1 "$trials"); do
	d=$T/extkill-$s
	mkdir -p "$d"
	(ulimit -c 0; exec env CUTRACE_DIR="$d" CUTRACE_SIZE=64M LD_PRELOAD="$SHIM_PRELOAD" \
		"$REL_BIN/rel_busy" -t $threads -n 100000 -p 200 -d "$d/done") > "$d/out" 2> "$d/err" &
	pid=$!
	sleep "0.$((RANDOM % 4 + 1))$((RANDOM % 10))"
	kill -KILL $pid 2> /dev/null
	wait $pid
	check_one "external SIGKILL $s" "$d" 137 $?
done

# a call held inside the (fake) kernel when the process is killed
d=$T/hang
FAKENV_HANG_CMD=0x71 FAKENV_HANG_SEC=30 run_busy "$d" -c hang -s 5
check_one "SIGKILL during a held ioctl" "$d" 137 $? --hang

echo "totals: $tot_runs crashed runs checked, $tot_torn torn records, $tot_inflight calls in flight"
finish
