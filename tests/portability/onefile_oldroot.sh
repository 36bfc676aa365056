#!/usr/bin/env bash
# The one-file cutrace copied alone into the Debian 11 root (glibc 2.31, no
# libelf, nothing of ours besides): probe, run, doctor and show work there,
# from the shim and probe it carries; the traces it leaves decode the same
# with the cutrace built here, reading them from outside the root.
#
#   onefile_oldroot.sh ONEFILE CUTRACE FAKENV FAKECUDA_DIR
# (FAKENV and the fake libcuda: the copies built to load on glibc 2.17+)
set -uo pipefail
onefile=${1:?usage: onefile_oldroot.sh ONEFILE CUTRACE FAKENV FAKECUDA_DIR}
cutrace=${2:?} fakenv=${3:?} fakecuda=${4:?}
. "$(dirname "$0")/oldroot_lib.sh"
oldroot_require
fail=0
bad() { echo "FAIL: $*"; fail=1; }

[ -e "$OLDROOT/usr/lib/x86_64-linux-gnu/libelf.so.1" ] && bad "the root has libelf: the test proves nothing"
mkdir -p "$W/bin" "$W/rig"
cp "$onefile" "$W/bin/cutrace"
cp "$fakenv" "$W/rig/libfakenv.so"
cp -L "$fakecuda/libcuda.so.1" "$W/rig/libcuda.so.1"
c=$WIN/bin/cutrace
rig=(LD_LIBRARY_PATH="$WIN/rig" LD_PRELOAD="$WIN/rig/libfakenv.so")

# probe with no driver at all: the loader verdict
oldroot_run "$c" probe -o "$WIN/p0" >"$W/p0.out" 2>&1
r=$?
[ $r -eq 1 ] || bad "probe without libcuda exited $r (expected 1): $(tail -3 "$W/p0.out")"
grep -q 'FAILED \[loader\]' "$W/p0.out" || bad "probe without libcuda: no loader verdict: $(grep -m2 -i 'verdict\|error' "$W/p0.out")"

# probe over the rig: healthy
oldroot_run "${rig[@]}" "$c" probe -o "$WIN/p1" >"$W/p1.out" 2>&1
r=$?
[ $r -eq 0 ] || bad "probe exited $r (expected 0): $(tail -3 "$W/p1.out")"
grep -q '^cuInit(0) = 0 (CUDA_SUCCESS)' "$W/p1.out" || bad "probe: no 'cuInit(0) = 0' line"
grep -q ': OK CUDA initialized' "$W/p1.out" || bad "probe: no OK verdict"

# run: python3's ctypes under the carried shim, exit status passed through
oldroot_run "${rig[@]}" "$c" run -o "$WIN/r" -- python3 -c \
	'import ctypes, sys; l = ctypes.CDLL("libcuda.so.1"); print("cuInit", l.cuInit(0)); sys.exit(4)' \
	>"$W/r.out" 2>"$W/r.err"
r=$?
[ $r -eq 4 ] || bad "run exited $r (expected the program's 4): $(tail -3 "$W/r.err")"
grep -qx 'cuInit 0' "$W/r.out" || bad "run: program output '$(cat "$W/r.out")'"
grep -q 'OK CUDA initialized' "$W/r.err" || bad "run: no OK verdict: $(head -3 "$W/r.err")"

# show inside the root, and the cutrace built here on the same files
oldroot_run "$c" show --no-time --color=never "$WIN/r" >"$W/s.in" 2>&1
r=$?
[ $r -eq 0 ] || bad "show in the root exited $r: $(tail -2 "$W/s.in")"
"$cutrace" show --no-time --color=never "$W/r" 2>&1 | sed "s|$OLDROOT||g" >"$W/s.out"
cmp -s "$W/s.in" "$W/s.out" || bad "show in and outside the root differ: $(diff "$W/s.in" "$W/s.out" | head -4 | tr '\n' ' ')"
grep -q 'cuInit(flags=0x0) = CUDA_SUCCESS' "$W/s.in" || bad "show: no cuInit line"
oldroot_run "$c" show --json "$WIN/r" | python3 -c 'import json, sys; json.load(sys.stdin)' 2>/dev/null ||
	bad "show --json in the root is not JSON"

# doctor: the machine checks and the carried probe
oldroot_run "${rig[@]}" CUTRACE_DIR="$WIN/d" "$c" doctor >"$W/d.out" 2>&1
r=$?
grep -q '^verdict:' "$W/d.out" || bad "doctor printed no verdict (exit $r): $(tail -3 "$W/d.out")"
grep -q 'probe skipped\|could not trace' "$W/d.out" && bad "doctor's probe did not run: $(grep -m1 'probe skipped\|could not trace' "$W/d.out")"

[ $fail -eq 0 ] && echo "ok: the one file ($(stat -c %s "$W/bin/cutrace") bytes) alone in Debian 11 ($(sed -n 's/^ok bullseye \(glibc [0-9.]*\).*/\1/p' "$CUTRACE_OLDROOT_DIR/STATUS")): probe (no driver: loader; rig: OK), run (exit 4 passed through, OK), show (same as outside), show --json, doctor"
exit $fail
