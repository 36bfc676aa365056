#!/usr/bin/env bash
# NVIDIA's real libcuda (535, tests/real) in the Debian 11 root, under the
# shim: Python's ctypes loads libcuda.so.1 and libnvidia-ml.so.1 and calls
# cuInit, cuDriverGetVersion and nvmlInit_v2 with and without libcutrace.so
# preloaded -- the same stdout, stderr and exit status; the trace decodes
# outside the root with the verdict a machine without the kernel module
# gets (the NVIDIA kernel module is not loaded).  As root with no NVIDIA module
# the real libcuda creates /dev/nvidiactl in the root: removed afterwards.
#
#   oldroot_real.sh CUTRACE SHIM
set -uo pipefail
cutrace=${1:?usage: oldroot_real.sh CUTRACE SHIM}
shim=${2:?}
here=$(dirname "$0")
. "$here/oldroot_lib.sh"
. "$here/../real/real.sh"
real_require
oldroot_require
nodes_before=$(ls -d "$OLDROOT"/dev/nvidia* 2>/dev/null | tr '\n' ' ')
cleanup() {
	local n
	for n in "$OLDROOT"/dev/nvidia*; do
		[ -e "$n" ] || continue
		case " $nodes_before " in *" $n "*) ;; *) rm -f "$n" ;; esac
	done
	[ -n "${CUTRACE_KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT

mkdir -p "$W/lib" "$W/nv"
cp "$shim" "$W/lib/libcutrace.so"
cp -a "$REAL_LIBCUDA_DIR"/libcuda.so* "$REAL_LIBCUDA_DIR"/libnvidia-ml.so* "$W/nv/"
cat >"$W/real.py" <<'PY'
import ctypes
cu = ctypes.CDLL("libcuda.so.1")
r = cu.cuInit(0)
v = ctypes.c_int()
print("cuInit", r, "cuDriverGetVersion", cu.cuDriverGetVersion(ctypes.byref(v)), v.value)
nv = ctypes.CDLL("libnvidia-ml.so.1")
print("nvmlInit_v2", nv.nvmlInit_v2())
PY
fail=0
for run in base shim; do
	pre=()
	[ $run = shim ] && pre=(LD_PRELOAD="$WIN/lib/libcutrace.so" CUTRACE_DIR="$WIN/traces")
	oldroot_run LD_LIBRARY_PATH="$WIN/nv" "${pre[@]}" python3 "$WIN/real.py" >"$W/$run.out" 2>"$W/$run.err"
	echo $? >"$W/$run.rc"
done
for f in out err rc; do
	cmp -s "$W/base.$f" "$W/shim.$f" ||
		{ echo "FAIL: $f differs with the shim: $(diff "$W/base.$f" "$W/shim.$f" | head -4 | tr '\n' ' ')"; fail=1; }
done
"$cutrace" show --no-time --color=never "$W/traces" >"$W/show" 2>&1
r=$?
[ $r -eq 1 ] || { echo "FAIL: cutrace show exited $r (expected 1, a failed process): $(tail -2 "$W/show")"; fail=1; }
grep -q '^  verdict  FAILED  layer kernel-handshake' "$W/show" && grep -q 'the NVIDIA kernel module is not loaded' "$W/show" ||
	{ echo "FAIL: no 'kernel module is not loaded' verdict: $(grep -m2 -E 'verdict|why' "$W/show" | tr '\n' ' ')"; fail=1; }
grep -q "cuInit(flags=0x0) = CUDA_ERROR_NO_DEVICE (100)" "$W/show" || { echo "FAIL: no cuInit 100 in the trace"; fail=1; }
grep -q "libcuda $WIN/nv/libcuda.so.$REAL_VERSION" "$W/show" ||
	{ echo "FAIL: the trace does not name the real libcuda $REAL_VERSION: $(grep -m1 'libcuda' "$W/show")"; fail=1; }
[ $fail -eq 0 ] && echo "ok: real libcuda $REAL_VERSION in Debian 11: '$(tr '\n' ' ' <"$W/shim.out")' with and without the shim; $(grep -m1 '^  verdict' "$W/show" | sed 's/^ *//')"
exit $fail
