#!/usr/bin/env bash
# Another dl* interposer in the Debian 11 root (glibc 2.31, where dlopen and
# dlsym live in libdl and have no GLIBC_2.34 version): Python's ctypes loads
# the rig's fake libcuda and looks its entry points up with libinterposer.so
# (tests/programs/interposer.c, HAMi-core style) preloaded alone, after the
# shim and before it.  The interposer must count the same dlopen and dlsym
# calls in all three, and the program print the same.
#
#   interposer.sh SHIM INTERPOSER FAKENV FAKECUDA_DIR
# (FAKENV and the fake libcuda built to load on glibc 2.17+; see tests.cmake)
set -uo pipefail
shim=${1:?usage: interposer.sh SHIM INTERPOSER FAKENV FAKECUDA_DIR}
interp=${2:?} fakenv=${3:?} fakecuda=${4:?}
. "$(dirname "$0")/oldroot_lib.sh"
oldroot_require

mkdir -p "$W/lib" "$W/cuda" "$W/traces"
cp "$shim" "$W/lib/libcutrace.so"
cp "$interp" "$W/lib/libinterposer.so"
cp "$fakenv" "$W/lib/libfakenv.so"
cp -L "$fakecuda/libcuda.so.1" "$W/cuda/libcuda.so.1"
cat >"$W/cuda_init.py" <<'PY'
import ctypes
l = ctypes.CDLL("libcuda.so.1")
n = ctypes.c_int()
print("cuInit", l.cuInit(0), "count", l.cuDeviceGetCount(ctypes.byref(n)), n.value)
PY

I=$WIN/lib/libinterposer.so S=$WIN/lib/libcutrace.so F=$WIN/lib/libfakenv.so
fail=0
declare -A counts outs
for order in alone after before; do
	case $order in
	alone) pre="$I $F" ;;
	after) pre="$S $I $F" ;;
	before) pre="$I $S $F" ;;
	esac
	rm -f "$W/counts"
	outs[$order]=$(oldroot_run LD_LIBRARY_PATH="$WIN/cuda" LD_PRELOAD="$pre" CUTRACE_DIR="$WIN/traces/$order" \
		INTERPOSER_OUT="$WIN/counts" python3 "$WIN/cuda_init.py" 2>&1; echo "exit $?")
	counts[$order]=$(cat "$W/counts" 2>/dev/null)
	echo "$order: ${counts[$order]:-no report} | $(tr '\n' ' ' <<<"${outs[$order]}")"
done
case ${counts[alone]} in
*"dlopen=0"* | *"dlsym=0"* | "") echo "FAIL: the interposer alone saw no CUDA dlopen/dlsym"; fail=1 ;;
esac
for order in after before; do
	[ "${counts[$order]}" = "${counts[alone]}" ] ||
		{ echo "FAIL: interposer $order the shim counts '${counts[$order]}', alone '${counts[alone]}'"; fail=1; }
	[ "${outs[$order]}" = "${outs[alone]}" ] || { echo "FAIL: output differs ($order)"; fail=1; }
done
[ -n "$(ls "$W/traces/after"/*.cutrace 2>/dev/null)" ] || { echo "FAIL: no trace with the interposer after the shim"; fail=1; }
[ $fail -eq 0 ] && echo "ok: glibc $(sed -n 's/^ok bullseye glibc \([0-9.]*\).*/\1/p' "$CUTRACE_OLDROOT_DIR/STATUS"): the interposer sees the same calls alone, after and before the shim"
exit $fail
