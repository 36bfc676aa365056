#!/usr/bin/env bash
# A stale user-space driver in front of the right one, on a real GPU: NVIDIA's
# libcuda / libnvidia-ml 535 (Debian non-free, tests/real/fetch.sh) loaded in
# front of the machine's kernel module (580 on the H200), recorded under
# cutrace with the programs people run, each way the loader can find the
# stale copy.  For issue 16: the traces become fixtures
# (tests/fixtures/h200-580/skew-*), what each program printed goes into
# SCENARIOS.md ("real, not injected").
#
#   scripts/gpu-skew.sh [-r REALDIR] [-c CUTRACE] [-o OUTDIR | OUTDIR]
#
# REALDIR (default .real): the extracted packages (the dpkg -x root, searched
# recursively), made on the development machine by `tests/real/fetch.sh DIR`
# (DIR/root; the build tree's is build/tests/real-nvidia/root, 32 MB) and
# carried here.  CUTRACE (default build/onefile/cutrace): the one-file cutrace built
# by scripts/setup.sh, carried here (no libelf, no build needed); if it is
# missing the tree is built with cmake -DCUTRACE_TESTS=OFF.  OUTDIR (default
# $OUT) gets gpu-skew.md (the table), gpu-skew.log (every command's output,
# the verdicts, `cutrace show` of each trace, doctor) and
# gpu-skew-traces.tar.gz (the traces, gzipped one by one), and per case
# skew/CASE/ with each trace gzipped (*.cutrace.gz) and verdict.txt (what
# cutrace run printed on stderr, then `cutrace show --no-time` of the traces).
#
# The cases (each under `cutrace run`):
#   ldpath-*  LD_LIBRARY_PATH=STALE (prepended to what the machine has):
#             probe (dlopen libcuda.so.1 + cuInit), cudart 11.8 (Debian's
#             libcudart.so.11.0), CUDA 13 static and shared (nvcc), torch,
#             NVML (ctypes nvmlInit_v2)
#   runpath   a program linked to libcuda with RUNPATH=STALE
#   abspath   ctypes.CDLL("STALE/libcuda.so.1").cuInit(0)
#   syslib    STALE's libcuda.so.1 copied into /usr/lib/x86_64-linux-gnu (+ ldconfig),
#             probe and torch; removed again (+ ldconfig) at the end
#   healthy   the probe without the stale copy (control)
# Exit 0 when every case ran (whatever its verdict).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 2
REAL=.real CT=build/onefile/cutrace
OUTDIR=
while getopts "r:c:o:h" o; do
	case $o in
	r) REAL=$OPTARG ;;
	c) CT=$OPTARG ;;
	o) OUTDIR=$OPTARG ;;
	*) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$OUTDIR" ] || OUTDIR=${1:-${OUT:-}}
[ -n "$OUTDIR" ] || { echo "gpu-skew: give OUTDIR (or set OUT)" >&2; exit 2; }
mkdir -p "$OUTDIR" && OUTDIR=$(cd "$OUTDIR" && pwd) || exit 2
W=$(mktemp -d "${TMPDIR:-/tmp}/cutrace-skew.XXXXXX")
SYSLIB=
NODES_BEFORE=$(ls -d /dev/nvidia* 2>/dev/null | tr '\n' ' ')
cleanup() {
	# without the module, as root, libcuda creates /dev/nvidiactl itself: remove what it made
	local n
	for n in /dev/nvidia*; do
		[ -e "$n" ] || continue
		case " $NODES_BEFORE " in *" $n "*) ;; *) rm -f "$n" ;; esac
	done
	if [ -n "$SYSLIB" ]; then
		rm -f "$SYSLIB/libcuda.so.1" "$SYSLIB/$(basename "$cu")"
		ldconfig 2>/dev/null
	fi
	rm -rf "$W"
}
trap cleanup EXIT
die() { echo "gpu-skew: $*" >&2; exit 1; }
log=$OUTDIR/gpu-skew.log md=$OUTDIR/gpu-skew.md
: >"$log"

# ---- the stale libraries: one directory with the sonames (symlinks may not
# survive the carry, so they are made again here) --------------------------------
cu=$(find "$REAL" -name 'libcuda.so.5*' -type f 2>/dev/null | head -1)
ml=$(find "$REAL" -name 'libnvidia-ml.so.5*' -type f 2>/dev/null | head -1)
rt=$(find "$REAL" -name 'libcudart.so.11.*.*' -type f 2>/dev/null | head -1)
[ -n "$cu" ] && [ -n "$ml" ] && [ -n "$rt" ] ||
	die "no libcuda.so.5*, libnvidia-ml.so.5* and libcudart.so.11.* under $REAL (make it with tests/real/fetch.sh $REAL)"
STALE=$W/stale RT11=$W/cudart11
mkdir -p "$STALE" "$RT11"
cp "$cu" "$ml" "$STALE/" && cp "$rt" "$RT11/" || die "copying the libraries failed"
ln -s "$(basename "$cu")" "$STALE/libcuda.so.1"
ln -s libcuda.so.1 "$STALE/libcuda.so"
ln -s "$(basename "$ml")" "$STALE/libnvidia-ml.so.1"
ln -s "$(basename "$rt")" "$RT11/libcudart.so.11.0"
ln -s libcudart.so.11.0 "$RT11/libcudart.so"

# ---- cutrace -------------------------------------------------------------------------
if [ ! -x "$CT" ]; then
	echo "gpu-skew: $CT missing, building the tree" >&2
	cmake -S . -B "$W/build" -DCMAKE_BUILD_TYPE=Release -DCUTRACE_TESTS=OFF >"$W/build.log" 2>&1 &&
		cmake --build "$W/build" -j "$(nproc)" >>"$W/build.log" 2>&1 || { tail -30 "$W/build.log"; die "build failed"; }
	CT=$W/build/bin/cutrace
fi
cp "$CT" "$W/cutrace" && chmod 755 "$W/cutrace" && CT=$W/cutrace

# ---- the programs --------------------------------------------------------------------
cuda=${CUDA_HOME:-/usr/local/cuda}
NVCC=$cuda/bin/nvcc
command -v nvcc >/dev/null && NVCC=$(command -v nvcc)
P=$W/prog
mkdir -p "$P"
# each program on its own: a missing compiler skips its cases, nothing else
cc -O2 -I"$cuda/include" tests/programs/rt_probe.c -o "$P/rt11" -L"$RT11" -lcudart -Wl,-rpath,"$RT11" >>"$W/progs.log" 2>&1 ||
	echo "gpu-skew: rt11 not built (see progs.log in the log)" >&2
"$NVCC" -O2 -x cu tests/programs/rt_probe.c -o "$P/rt13static" >>"$W/progs.log" 2>&1 ||
	echo "gpu-skew: rt13static not built (nvcc?)" >&2
"$NVCC" -O2 -x cu -cudart shared tests/programs/rt_probe.c -o "$P/rt13shared" >>"$W/progs.log" 2>&1 ||
	echo "gpu-skew: rt13shared not built (nvcc?)" >&2
cc -O2 -I"$cuda/include" tests/programs/probe_linked.c -o "$P/runpath" -L"$STALE" -lcuda \
	-Wl,--enable-new-dtags,-rpath,"$STALE" >>"$W/progs.log" 2>&1 || echo "gpu-skew: runpath not built" >&2
cat >"$P/torch_init.py" <<'EOF'
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
cat >"$P/nvml.py" <<'EOF'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else 'libnvidia-ml.so.1')
r = lib.nvmlInit_v2()
n = ctypes.c_uint(0)
c = lib.nvmlDeviceGetCount_v2(ctypes.byref(n)) if r == 0 else -1
print('nvmlInit_v2=%d nvmlDeviceGetCount_v2=%d count=%d' % (r, c, n.value))
sys.exit(r != 0)
EOF
cat >"$P/abspath.py" <<'EOF'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
r = lib.cuInit(0)
v = ctypes.c_int(0)
lib.cuDriverGetVersion(ctypes.byref(v))
print('cuInit=%d cuDriverGetVersion=%d' % (r, v.value))
sys.exit(r != 0)
EOF

# ---- what the machine has ---------------------------------------------------------------
{
	echo "==== machine"
	uname -a
	head -1 /proc/driver/nvidia/version 2>/dev/null || echo "no /proc/driver/nvidia/version"
	cat /sys/module/nvidia/version 2>/dev/null
	echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
	cat /etc/ld.so.conf /etc/ld.so.conf.d/* 2>/dev/null
	ldconfig -p | grep -E 'libcuda\.so|libnvidia-ml\.so|libcudart' || true
	ls -l /usr/local/nvidia/lib64/libcuda* /usr/local/cuda/compat/ 2>/dev/null
	python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' 2>&1 | tail -1
	"$NVCC" --version | tail -2
	echo "stale: $(ls "$STALE" | tr '\n' ' ')"
	sha256sum "$cu" "$ml" "$rt"
	echo "==== building the programs"
	cat "$W/progs.log"
} >>"$log" 2>&1

# ---- one case ----------------------------------------------------------------------------
T=$W/traces
mkdir -p "$T"
rows=()
case_run() { # name env-assignment|- command...: the command under cutrace run,
	# or, for "probe", cutrace's own probe
	local name=$1 envs=$2 d=$T/$1 r
	shift 2
	case $1 in /*) [ -x "$1" ] || { rows+=("| $name | - | (not built) | - |"); return; } ;; esac
	mkdir -p "$d"
	local cmd=("$CT" run --color=never --size 8M -o "$d" -- "$@")
	[ "$1" = probe ] && cmd=("$CT" probe --color=never --size 8M -o "$d")
	[ "$envs" = - ] && envs=CUTRACE_SKEW_CASE=$name
	env "$envs" "${cmd[@]}" >"$W/$name.out" 2>"$W/$name.err"
	r=$?
	{
		echo "==== $name: $envs ${cmd[*]} (exit $r)"
		echo "---- stdout"; cat "$W/$name.out"
		echo "---- stderr (the verdicts)"; cat "$W/$name.err"
		for f in "$d"/*; do
			[ -f "$f" ] || continue
			echo "---- cutrace show --no-time $(basename "$f")"
			"$CT" show --color=never --no-time "$f" 2>&1 | head -400
		done
	} >>"$log"
	# per case: the traces gzipped and the verdict text, for fixtures
	mkdir -p "$OUTDIR/skew/$name"
	{
		cat "$W/$name.err"
		for f in "$d"/*.cutrace; do
			[ -f "$f" ] || continue
			echo "---- cutrace show --no-time $(basename "$f")"
			"$CT" show --color=never --no-time "$f" 2>&1 | sed -n '/^  verdict/,$p' | head -60
		done
	} >"$OUTDIR/skew/$name/verdict.txt" 2>&1
	for f in "$d"/*.cutrace; do
		[ -f "$f" ] && gzip -9c "$f" >"$OUTDIR/skew/$name/$(basename "$f").gz"
	done
	local got verdict
	got=$(grep -v '^$' "$W/$name.out" | tr '\n' ' ' | cut -c1-160)
	verdict=$( (sed -n 's/^cutrace: pid [0-9]* ([^)]*) on [^:]*: //p' "$W/$name.err"
		sed -n 's/^ *verdict *//p' "$W/$name.out" "$W/$name.err") | head -1 | cut -c1-220)
	rows+=("| $name | $r | \`${got:-(nothing)}\` | ${verdict:-$(tail -1 "$W/$name.err" | cut -c1-200)} |")
}

LDP=$STALE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
case_run healthy-probe - probe
case_run ldpath-probe "LD_LIBRARY_PATH=$LDP" probe
case_run ldpath-rt11 "LD_LIBRARY_PATH=$LDP" "$P/rt11"
case_run ldpath-rt13static "LD_LIBRARY_PATH=$LDP" "$P/rt13static"
case_run ldpath-rt13shared "LD_LIBRARY_PATH=$LDP" "$P/rt13shared"
case_run ldpath-torch "LD_LIBRARY_PATH=$LDP" python3 "$P/torch_init.py"
case_run ldpath-nvml "LD_LIBRARY_PATH=$LDP" python3 "$P/nvml.py"
case_run runpath - "$P/runpath"
case_run abspath - python3 "$P/abspath.py" "$STALE/libcuda.so.1"
# doctor with the stale copy first: what its candidate search finds here
{
	echo "==== doctor with LD_LIBRARY_PATH=$LDP"
	env LD_LIBRARY_PATH="$LDP" CUTRACE_DIR="$W/doctor" "$CT" doctor --color=never 2>&1
	echo "(exit $?)"
} >>"$log"

# a leftover in a system directory, found through ld.so.cache
SYSLIB=/usr/lib/x86_64-linux-gnu
# (only on a GPU machine: elsewhere this would change a shared system)
if [ -d "$SYSLIB" ] && [ ! -e "$SYSLIB/libcuda.so.1" ] && [ "$(id -u)" = 0 ] && [ -e /proc/driver/nvidia/version ]; then
	cp "$cu" "$SYSLIB/" && ln -s "$(basename "$cu")" "$SYSLIB/libcuda.so.1" && ldconfig
	echo "==== syslib: ldconfig -p after the copy" >>"$log"
	ldconfig -p | grep -E 'libcuda\.so' >>"$log"
	case_run syslib-probe - probe
	case_run syslib-torch - python3 "$P/torch_init.py"
else
	echo "==== syslib: skipped ($SYSLIB/libcuda.so.1 exists, not root or no NVIDIA module)" >>"$log"
	SYSLIB=
fi

# ---- results ----------------------------------------------------------------------------------
{
	echo "# cutrace gpu-skew, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "- kernel module: $(sed -n 's/.*Kernel Module *\([0-9.]*\).*/\1/p' /proc/driver/nvidia/version 2>/dev/null | head -1)"
	echo "- stale: $(basename "$cu"), $(basename "$ml"), $(basename "$rt") in $STALE"
	echo "- cutrace: $("$CT" --version 2>&1 | head -1)"
	echo
	echo "| case | exit | the program printed | cutrace's verdict |"
	echo "|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
} >"$md"
(cd "$T" && find . -type f ! -path '*/.cutrace/*' -exec gzip -9 {} + && tar --exclude=.cutrace -czf "$OUTDIR/gpu-skew-traces.tar.gz" .) ||
	echo "gpu-skew: packing the traces failed" >&2
cat "$md"
exit 0
