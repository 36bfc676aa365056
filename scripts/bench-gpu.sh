#!/usr/bin/env bash
# What cutrace costs a real CUDA initialization, on a machine with a GPU.
#
#   scripts/bench-gpu.sh [-n RUNS] [-o OUTDIR]
#
# Builds libcutrace.so with gcc straight from shim/*.c and common/*.c (no cmake, libelf or
# check needed: the one generated header, cutrace_gen/shim_tables.h, comes
# from common/xlat/gen_xlat.py and the CUDA Toolkit's cuda.h), builds the bare
# driver probe (tracer/probe/probe.c: dlopen libcuda.so.1, cuInit, list the
# devices) with gcc -ldl, then times, RUNS times (default 15) each and
# interleaved, with and without LD_PRELOAD of the shim:
#   probe   the probe process, wall clock
#   torch   python3 -c "torch.cuda.init(); torch.zeros(1, device='cuda')":
#           the two calls timed inside Python, and the whole process
# and prints the medians, the ratio, a bootstrap 95 % interval of the ratio
# (how far the machine's noise moves it) and PASS/FAIL against the target (the
# shim adds at most 2%).  Results also go to OUTDIR/bench-gpu.txt (OUTDIR
# defaults to $OUT when set, as on the device machines).
# If cuda.h cannot be found, point CUDA_HOME at the toolkit, or
# CUTRACE_SHIM_TABLES at a shim_tables.h generated elsewhere.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
RUNS=15
OUTDIR=${OUT:-}
while getopts "n:o:h" o; do
	case $o in
	n) RUNS=$OPTARG ;;
	o) OUTDIR=$OPTARG ;;
	*) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
W=$(mktemp -d "${TMPDIR:-/tmp}/cutrace-bench-gpu.XXXXXX")
trap 'rm -rf "$W"' EXIT
log=$W/bench-gpu.txt
say() { echo "$*" | tee -a "$log"; }
die() { echo "bench-gpu: $*" >&2; exit 1; }

# ---- build --------------------------------------------------------------------
find_cuda_include() {
	local c
	for c in "${CUTRACE_CUDA_INCLUDE_DIR:-}" ${CUDA_HOME:+"$CUDA_HOME/include"} \
		 ${CUDA_PATH:+"$CUDA_PATH/include"} /usr/local/cuda/include \
		 /usr/local/cuda/targets/x86_64-linux/include /usr/local/cuda/targets/sbsa-linux/include \
		 /usr/include; do
		[ -n "$c" ] && [ -f "$c/cuda.h" ] && { echo "$c"; return 0; }
	done
	python3 - <<'EOF' 2>/dev/null
import glob, site
for sp in site.getsitepackages() + [site.getusersitepackages()]:
    for d in sorted(glob.glob(sp + "/nvidia/*/include")):
        if glob.glob(d + "/cuda.h"):
            print(d); raise SystemExit(0)
raise SystemExit(1)
EOF
}

mkdir -p "$W/gen/cutrace_gen" "$W/traces"
if [ -n "${CUTRACE_SHIM_TABLES:-}" ]; then
	cp "$CUTRACE_SHIM_TABLES" "$W/gen/cutrace_gen/shim_tables.h" || die "cannot copy $CUTRACE_SHIM_TABLES"
else
	inc=$(find_cuda_include) || die "cuda.h not found: set CUDA_HOME, or CUTRACE_SHIM_TABLES to a generated shim_tables.h"
	# the same arguments as common/xlat/xlat.cmake
	python3 common/xlat/gen_xlat.py --in-dir common/xlat --out-dir "$W/gen" --cuda-include "$inc" --cc gcc \
		>"$W/gen.log" 2>&1 || { cat "$W/gen.log"; die "gen_xlat.py failed"; }
fi
# the same flags as shim/CMakeLists.txt, the version script made as it makes it
gcc -E -P -undef -x c -Icommon shim/shim.map.in -o "$W/shim.map" >"$W/build.log" 2>&1 ||
	{ cat "$W/build.log"; die "making shim.map failed"; }
gcc -shared -fPIC -O2 -g -D_GNU_SOURCE -DCUTRACE_VERSION='"0.1.0"' -fvisibility=hidden \
	-ftls-model=initial-exec -foptimize-sibling-calls -fno-strict-aliasing -fno-plt \
	-Ishim/include -Ishim -Icommon -I"$W/gen" shim/*.c common/*.c -o "$W/libcutrace.so" \
	-Wl,--version-script="$W/shim.map" -Wl,-z,defs -Wl,-z,now -ldl >>"$W/build.log" 2>&1 ||
	{ cat "$W/build.log"; die "building the shim failed"; }
gcc -O2 -D_GNU_SOURCE -o "$W/probe" tracer/probe/probe.c -ldl >>"$W/build.log" 2>&1 ||
	{ cat "$W/build.log"; die "building the probe failed"; }
SHIM=$W/libcutrace.so

# ---- measurements -------------------------------------------------------------------
export CUTRACE_DIR=$W/traces
TORCH_PY="import time, torch
t = time.perf_counter()
torch.cuda.init(); torch.zeros(1, device='cuda'); torch.cuda.synchronize()
print('init_s=%.6f' % (time.perf_counter() - t))"

now_ns() { date +%s%N; }
run_one() { # mode(plain|shim) what(probe|torch) -> "wall_s init_s|- traced(0|1)"
	local pre= t0 t1 out
	[ "$1" = shim ] && pre=$SHIM
	rm -f "$CUTRACE_DIR"/*.cutrace
	t0=$(now_ns)
	case $2 in
	probe) out=$(LD_PRELOAD=$pre "$W/probe" 2>&1) ;;
	torch) out=$(LD_PRELOAD=$pre python3 -c "$TORCH_PY" 2>&1) ;;
	esac
	local rc=$?
	t1=$(now_ns)
	[ $rc -eq 0 ] || { echo "bench-gpu: $2 ($1) failed (rc=$rc): $(echo "$out" | tail -3)" >&2; return 1; }
	local traced=0 init=-
	ls "$CUTRACE_DIR"/*.cutrace >/dev/null 2>&1 && traced=1
	[ "$2" = torch ] && init=$(echo "$out" | sed -n 's/^init_s=//p' | tail -1)
	echo "$(awk "BEGIN { printf \"%.6f\", ($t1 - $t0) / 1e9 }") ${init:--} $traced"
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

say "cutrace GPU benchmark  $(date -u '+%Y-%m-%d %H:%M UTC')"
say "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 ||
	cat /proc/driver/nvidia/version 2>/dev/null | head -1)"
say "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cpus; kernel $(uname -r)"
say "torch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1)"
say "runs: $RUNS of each, interleaved (order alternates every round)"

# one unmeasured round of each: page cache, driver state, Python bytecode
run_one plain probe >/dev/null || die "the probe does not run here"
run_one plain torch >/dev/null || die "torch does not run here"
run_one shim torch >/dev/null || die "torch does not run under the shim"

declare -A wall init
traced_files=0
for i in $(seq "$RUNS"); do
	order="plain shim"
	[ $((i % 2)) -eq 0 ] && order="shim plain"
	for what in probe torch; do
		for m in $order; do
			r=$(run_one "$m" "$what") || exit 1
			read -r w_s i_s tr <<<"$r"
			wall[$what.$m]+=" $w_s"
			[ "$what" = torch ] && init[$m]+=" $i_s"
			[ "$m" = shim ] && traced_files=$((traced_files + tr))
		done
	done
	printf '.' >&2
done
echo >&2

fails=0
report() { # label, plain values, shim values
	local p s ratio v
	p=$(median $2); s=$(median $3)
	ratio=$(awk "BEGIN { printf \"%.4f\", $s / $p }")
	v=$(awk "BEGIN { print ($ratio <= 1.02) ? \"PASS\" : \"FAIL\" }")
	[ "$v" = PASS ] || fails=$((fails + 1))
	say "$(printf '%-34s plain %8.4f s  shim %8.4f s  ratio %s (%+.2f %%)  target <= 1.02  %s' "$1" "$p" "$s" \
		"$ratio" "$(awk "BEGIN { print ($ratio - 1) * 100 }")" "$v")"
	say "$(printf '%-34s 95 %% interval of the ratio (bootstrap): %s' "" "$(ratio_ci "$2" "$3")")"
}
# how far the ratio of the medians moves with the machine's noise: the 2.5th
# and 97.5th percentiles of the ratio over 4000 resamplings of both groups
ratio_ci() {
	awk -v P="$1" -v S="$2" 'function med(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	BEGIN { srand(1); np = split(P, p, " "); ns = split(S, s, " "); R = 4000
		for (r = 1; r <= R; r++) {
			for (i = 1; i <= np; i++) x[i] = p[int(rand() * np) + 1]
			for (i = 1; i <= ns; i++) y[i] = s[int(rand() * ns) + 1]
			q[r] = med(y, ns) / med(x, np) }
		med(q, R); printf "%.4f .. %.4f", q[int(R * 0.025)], q[int(R * 0.975)] }'
}
say ""
say "medians of $RUNS runs:"
report "probe (process wall)" "${wall[probe.plain]}" "${wall[probe.shim]}"
report "torch init+zeros (in-process)" "${init[plain]}" "${init[shim]}"
report "torch (process wall)" "${wall[torch.plain]}" "${wall[torch.shim]}"
say "shim runs that left a trace file: $traced_files of $((2 * RUNS))"
say "raw samples (s):"
for k in probe.plain probe.shim torch.plain torch.shim; do say "  wall $k:${wall[$k]}"; done
for k in plain shim; do say "  init torch.$k:${init[$k]}"; done
[ -n "$OUTDIR" ] && mkdir -p "$OUTDIR" && cp "$log" "$OUTDIR/bench-gpu.txt"
exit $((fails > 0))
