#!/usr/bin/env bash
# Every failure scenario and every replay, checked against the real CUDA stack.
#
#   scripts/gpu-scenarios.sh [-o OUTDIR] [-j JOBS] [-b BUILDDIR] [-p PROGRAMS] [-T] [SCENARIO...]
#
# For a machine with a GPU (SCENARIOS.md holds what it printed on the H200).
# Builds cutrace (cmake, into BUILDDIR, default a temporary directory), a
# cudart program (tests/programs/rt_probe.c against the toolkit's shared
# libcudart) and then, for each scenario of `cutrace scenarios` (or those
# named) and each of three programs:
#   probe   cutrace-probe (dlopen libcuda.so.1, cuInit, count; --ctx for
#           devices-unavailable, --nvml for nvml-mismatch)
#   cudart  the cudart program
#   torch   torch.cuda.init(); torch.zeros(1, device='cuda')   (-T: skip)
# runs `cutrace run --scenario NAME` (with --timeout 15s, so hang-in-cuinit
# becomes a verdict), then hands the trace to `cutrace replay` with the same
# program, which derives the rules from the trace alone and checks that the
# new verdict has the recorded layer, step kind and final code.  Then the
# stored H200 traces of tests/fixtures/h200-580 are replayed with the program
# that recorded them.  JOBS cases run at once (default 6).  -p takes a list
# ("probe cudart torch" by default) of the programs to run.
#
# Writes OUTDIR/gpu-scenarios.md (a table: what each program got, what torch
# said, the verdict, whether replay reproduced it), gpu-scenarios.log (every
# command's output) and gpu-traces.tar.gz (the traces).  OUTDIR defaults to
# $OUT when set, as on the device machines.  Exit 1 if a replay of a failed
# run did not reproduce it.
# Without a GPU it runs against whatever libcuda.so.1 the environment gives
# (the test rig's fake one, with LD_LIBRARY_PATH and LD_PRELOAD set).
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
JOBS=6 OUTDIR=${OUT:-} B= TORCH=1 progs="probe cudart torch"
while getopts "o:j:b:p:Th" o; do
	case $o in
	o) OUTDIR=$OPTARG ;;
	j) JOBS=$OPTARG ;;
	b) B=$OPTARG ;;
	p) progs=$OPTARG ;;
	T) TORCH=0 ;;
	*) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $TORCH = 1 ] || progs=${progs//torch/}; progs=$(echo $progs)
has() { case " $progs " in *" $1 "*) return 0 ;; esac; return 1; }
[ -n "$OUTDIR" ] || { echo "gpu-scenarios: give -o OUTDIR (or set OUT)" >&2; exit 2; }
mkdir -p "$OUTDIR" || exit 2
W=$(mktemp -d "${TMPDIR:-/tmp}/cutrace-gpu-scen.XXXXXX")
trap 'rm -rf "$W"' EXIT
die() { echo "gpu-scenarios: $*" >&2; exit 1; }

# ---- build --------------------------------------------------------------------
if [ -z "$B" ]; then
	B=$W/build
	cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCUTRACE_TESTS=OFF >"$W/build.log" 2>&1 &&
		cmake --build "$B" -j "$(nproc)" >>"$W/build.log" 2>&1 || { tail -30 "$W/build.log"; die "build failed"; }
fi
CT=$B/bin/cutrace PROBE=$B/bin/cutrace-probe
[ -x "$CT" ] && [ -x "$PROBE" ] || die "no cutrace in $B/bin"
cuda=${CUDA_HOME:-/usr/local/cuda}
cc -O2 -I"$cuda/include" tests/programs/rt_probe.c -o "$W/rt" -L"$cuda/lib64" -lcudart \
	-Wl,-rpath,"$cuda/lib64" >>"$W/build.log" 2>&1 || { tail "$W/build.log"; die "building the cudart program failed"; }
cat >"$W/torch_init.py" <<'EOF'
import sys
try:
    import torch
    torch.cuda.init()
    x = torch.zeros(1, device='cuda')
    print('torch: ok')
except Exception as e:
    print('torch: %s: %s' % (type(e).__name__, (str(e).splitlines() or [''])[0]))
    sys.exit(1)
EOF
has torch && ! python3 -c 'import torch' 2>/dev/null && die "no torch here (-T skips it)"

# ---- one case: run (or take a stored trace), then replay --------------------------
prog_cmd() { # program [scenario]
	case $1 in
	probe) case ${2:-} in
		devices-unavailable | busy-ctx | i12 | i13) echo "$PROBE --ctx" ;;
		nvml-mismatch) echo "$PROBE --nvml" ;;
		*) echo "$PROBE" ;;
		esac ;;
	cudart) echo "$W/rt" ;;
	torch) echo "python3 $W/torch_init.py" ;;
	nvml) echo "python3 -c 'import ctypes,sys; r=ctypes.CDLL(\"libnvidia-ml.so.1\").nvmlInit_v2(); print(\"nvmlInit_v2=%d\" % r); sys.exit(r != 0)'" ;;
	esac
}
export CT PROBE W
export -f prog_cmd
case_one() { # kind(scen|fix) name program
	local d=$W/c/$1.$2.$3 cmd
	mkdir -p "$d"
	cmd=$(prog_cmd "$3" "$2")
	if [ "$1" = scen ]; then
		eval "\"$CT\" run -o \"$d/run\" --timeout 15s --scenario $2 -- $cmd" >"$d/run.out" 2>"$d/run.err"
		echo $? >"$d/run.rc"
		src=$d/run
	else
		[ -f "$W/fx/$2.cutrace" ] || { echo 2 >"$d/replay.rc"; return; }
		src=$W/fx/$2.cutrace
	fi
	eval "\"$CT\" replay -o \"$d/replay\" \"$src\" -- $cmd" >"$d/replay.out" 2>"$d/replay.err"
	echo $? >"$d/replay.rc"
}
export -f case_one

scen=("$@")
[ ${#scen[@]} -gt 0 ] || mapfile -t scen < <("$CT" scenarios | awk '{print $1}')
mkdir -p "$W/fx"
for f in tests/fixtures/h200-580/*.cutrace.gz; do
	gzip -dc "$f" >"$W/fx/$(basename "$f" .gz)"
done
{
	for s in "${scen[@]}"; do for p in $progs; do echo "scen $s $p"; done; done
	# the stored H200 traces, each with the program that recorded it
	if [ $# -eq 0 ]; then
		has probe && for f in i01 i02 i03 i04 i05 i06 i07 i08 i11 i12 i13 busy-ctx c1; do echo "fix $f probe"; done
		has probe && echo "fix i16 nvml"
		has cudart && for f in i14 i15 i19; do echo "fix $f cudart"; done
		has torch && for f in t1 t2 t3 hang-torch; do echo "fix $f torch"; done
	fi
} >"$W/cases"
echo "gpu-scenarios: $(wc -l <"$W/cases") cases, $JOBS at a time" >&2
xargs -P "$JOBS" -L 1 bash -c 'case_one "$@"' _ <"$W/cases"

# ---- report -----------------------------------------------------------------------
md=$OUTDIR/gpu-scenarios.md log=$OUTDIR/gpu-scenarios.log
: >"$log"
bad=0
cell_prog() { # dir program -> what the program got
	local o=$1/run.out rc
	rc=$(cat "$1/run.rc")
	[ "$rc" = 137 ] && { echo "killed at 15 s"; return; }
	case $2 in
	probe) grep -q '^libcuda:' "$o" || { echo "dlopen fails"; return; }
	       grep -m1 -E '= [1-9][0-9]* \(' "$o" | sed -E 's/ \(([A-Z_]+)\).*/ \1/; s/\(device 0\)//; s/\(0\)//; s/\(\)//' |
		       grep . || echo "all 0" ;;
	cudart) awk '$1 ~ /=[1-9]/ {print $1; f=1; exit} END {if (!f) print "all 0"}' "$o" ;;
	torch) sed -n 's/^torch: //p' "$o" | tail -1 | sed -E 's/^(RuntimeError: ).*(Error [0-9]+: )/\1... \2/' | cut -c1-140 ;;
	esac
}
verdict_of() { sed -n 's/^cutrace: pid [0-9]* ([^)]*) on [^:]*: //p' "$1" | head -1 | cut -c1-200; }
replay_cell() {
	case $(cat "$1/replay.rc" 2>/dev/null) in
	0) echo "yes" ;;
	1) echo "**NO**"; return 1 ;;
	*) grep -q 'nothing to replay\|healthy\|no failure' "$1/replay.err" "$1/replay.out" 2>/dev/null && echo "- (healthy)" ||
		echo "error: $(tail -1 "$1/replay.err")" ;;
	esac
}
{
	echo "cutrace gpu-scenarios, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
	has torch && echo "torch: $(python3 -c 'import torch; print(torch.__version__)' 2>&1 | tail -1)"
	echo
	echo "| scenario | probe | cudart | torch says | verdict on torch (probe without torch) | replay probe / cudart / torch |"
	echo "|---|---|---|---|---|---|"
} >"$md"
for s in "${scen[@]}"; do
	row="| $s"
	for p in probe cudart; do
		if has $p; then row="$row | $(cell_prog "$W/c/scen.$s.$p" $p)"; else row="$row | -"; fi
	done
	if has torch; then
		row="$row | $(cell_prog "$W/c/scen.$s.torch" torch) | $(verdict_of "$W/c/scen.$s.torch/run.err")"
	else
		vp=${progs%% *}; [ -n "$vp" ] || vp=probe
		row="$row | - | $(verdict_of "$W/c/scen.$s.$vp/run.err")"
	fi
	r=
	for p in $progs; do
		c=$(replay_cell "$W/c/scen.$s.$p") || bad=$((bad + 1))
		r="${r:+$r / }$c"
	done
	echo "$row | $r |" >>"$md"
done
if grep -q '^fix' "$W/cases"; then
	{
		echo
		echo "Stored H200 traces (tests/fixtures/h200-580) replayed:"
		echo
		echo "| trace | program | replay | recorded | replayed |"
		echo "|---|---|---|---|---|"
	} >>"$md"
	while read -r _ f p; do
		d=$W/c/fix.$f.$p
		c=$(replay_cell "$d") || bad=$((bad + 1))
		echo "| $f | $p | $c | $(sed -n 's/^recorded: pid [0-9]* ([^)]*) on [^:]*: //p' "$d/replay.out" | cut -c1-120) |" \
		     "$(sed -n 's/^replayed: pid [0-9]* ([^)]*) on [^:]*: //p' "$d/replay.out" | head -1 | cut -c1-120) |" >>"$md"
	done < <(grep '^fix' "$W/cases")
fi
for d in "$W"/c/*; do
	for f in run.out run.err run.rc replay.out replay.err replay.rc; do
		[ -f "$d/$f" ] && { echo "==== $(basename "$d") $f"; cat "$d/$f"; }
	done
done >>"$log"
tar -C "$W/c" -czf "$OUTDIR/gpu-traces.tar.gz" . 2>/dev/null
cat "$md"
echo "gpu-scenarios: $bad replays did not reproduce; table in $md" >&2
exit $((bad > 0))
