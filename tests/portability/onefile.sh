#!/usr/bin/env bash
# The one-file cutrace, copied alone into an empty directory on this
# machine: static (no interpreter, no NEEDED, no GLIBC version), and probe,
# run, doctor and show work from the shim and probe it carries; --lib and
# CUTRACE_LIB still choose another shim; in a trace directory others can
# write to, or on a noexec one, the carried files go into memfds (noexec
# needs unshare -m, else that case is left out with a note).
#
#   onefile.sh ONEFILE SHIM FAKENV FAKECUDA_DIR
set -uo pipefail
onefile=${1:?usage: onefile.sh ONEFILE SHIM FAKENV FAKECUDA_DIR}
shim=$(realpath "${2:?}") fakenv=$(realpath "${3:?}") fakecuda=$(realpath "${4:?}")
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
mkdir "$t/alone"
cp "$onefile" "$t/alone/cutrace"
c=$t/alone/cutrace
rig=(env -u LD_PRELOAD LD_LIBRARY_PATH="$fakecuda" LD_PRELOAD="$fakenv")

# static: nothing for the loader to find or version-check
if readelf -lW "$c" | grep -q INTERP; then bad "it has a program interpreter (not static)"; fi
if readelf -dW "$c" 2>/dev/null | grep -q NEEDED; then bad "it has NEEDED entries: $(readelf -dW "$c" | grep NEEDED | tr -s ' ')"; fi
if readelf -VW "$c" | grep -q 'GLIBC_'; then bad "it needs GLIBC versions"; fi

# probe, healthy (the rig's fake driver and kernel)
"${rig[@]}" "$c" probe -o "$t/p" >"$t/p.out" 2>&1
r=$?
[ $r -eq 0 ] || bad "probe exited $r (expected 0): $(tail -3 "$t/p.out")"
grep -q '^cuInit(0) = 0 (CUDA_SUCCESS)' "$t/p.out" || bad "probe: no 'cuInit(0) = 0' line"
grep -q ': OK CUDA initialized' "$t/p.out" || bad "probe: no OK verdict"
[ -x "$t/p/.cutrace/cutrace-probe" ] && [ -f "$t/p/.cutrace/libcutrace.so" ] ||
	bad "probe: the carried files are not in $t/p/.cutrace"

# run: the program's own status and output, the verdict, the trace
"${rig[@]}" "$c" run -o "$t/r" -- sh -c 'echo "preload=$LD_PRELOAD"; python3 -c "import ctypes,sys; sys.exit(ctypes.CDLL(\"libcuda.so.1\").cuInit(0) + 7)"' \
	>"$t/r.out" 2>"$t/r.err"
r=$?
[ $r -eq 7 ] || bad "run exited $r (expected the program's 7): $(tail -3 "$t/r.err")"
grep -qx "preload=$t/r/.cutrace/libcutrace.so:$fakenv" "$t/r.out" || bad "run: LD_PRELOAD was '$(cat "$t/r.out")'"
grep -q 'OK CUDA initialized' "$t/r.err" || bad "run: no OK verdict on stderr"
"$c" show --no-time "$t/r" >"$t/s.out" 2>&1
r=$?
[ $r -eq 0 ] || bad "show exited $r"
grep -q 'cuInit(flags=0x0) = CUDA_SUCCESS' "$t/s.out" || bad "show: no cuInit line"
"$c" show --json "$t/r" | python3 -c 'import json,sys; d=json.load(sys.stdin)' 2>/dev/null || bad "show --json is not JSON"

# a second run into a directory that holds traces is refused in one line
# and leaves them alone; into a directory that holds only the carried files
# of an earlier run (no trace) the second write replaces them
n0=$(find "$t/r" -name '*.cutrace' | wc -l)
"${rig[@]}" "$c" run -q -o "$t/r" -- true >"$t/r2.out" 2>&1 && bad "a second run into $t/r (holding traces) was not refused"
[ "$(wc -l <"$t/r2.out")" -eq 1 ] || bad "the refusal is not one line: $(cat "$t/r2.out")"
[ "$(find "$t/r" -name '*.cutrace' | wc -l)" -eq "$n0" ] || bad "the refused run changed $t/r"
mkdir -p "$t/r3" && cp -a "$t/r/.cutrace" "$t/r3/"
"${rig[@]}" "$c" run -q -o "$t/r3" -- true || bad "a run into $t/r3 (carried files only) failed"

# doctor: its probe runs under the carried shim
CUTRACE_DIR=$t/d "${rig[@]}" "$c" doctor >"$t/d.out" 2>&1
r=$?
grep -q '^verdict:' "$t/d.out" || bad "doctor printed no verdict (exit $r): $(tail -3 "$t/d.out")"
grep -q 'probe skipped' "$t/d.out" && bad "doctor skipped its probe: $(grep 'probe skipped' "$t/d.out")"

# the overrides
"$c" run -o "$t/o1" --lib "$shim" -- sh -c 'echo "$LD_PRELOAD"' >"$t/o1.out" 2>/dev/null
grep -qx "$shim" "$t/o1.out" || bad "--lib: LD_PRELOAD was '$(cat "$t/o1.out")'"
CUTRACE_LIB=$shim "$c" run -o "$t/o2" -- sh -c 'echo "$LD_PRELOAD"' >"$t/o2.out" 2>/dev/null
grep -qx "$shim" "$t/o2.out" || bad "CUTRACE_LIB: LD_PRELOAD was '$(cat "$t/o2.out")'"
[ -e "$t/o1/.cutrace" ] || [ -e "$t/o2/.cutrace" ] && bad "with an override the carried shim was written out anyway"
CUTRACE_LIB=$t/nonexistent.so "$c" run -o "$t/o3" -- true 2>"$t/o3.err"
r=$?
[ $r -eq 2 ] && grep -q "CUTRACE_LIB=$t/nonexistent.so" "$t/o3.err" ||
	bad "a missing CUTRACE_LIB: exit $r, '$(cat "$t/o3.err")' (expected 2 and the path named)"

# a trace directory others can write to, or a .cutrace that is a link:
# memfds, and the link's target is left alone
mkdir -m 0770 "$t/gw" && chmod 0770 "$t/gw"
"$c" run -o "$t/gw" -- sh -c 'echo "$LD_PRELOAD"' >"$t/gw.out" 2>/dev/null
grep -q '^/proc/[0-9]*/fd/[0-9]*$' "$t/gw.out" || bad "group-writable -o: LD_PRELOAD was '$(cat "$t/gw.out")' (expected a memfd)"
[ -e "$t/gw/.cutrace" ] && bad "group-writable -o: the shim was written into it"
mkdir -m 0700 "$t/ln" "$t/elsewhere" && ln -s "$t/elsewhere" "$t/ln/.cutrace"
"$c" run -o "$t/ln" -- sh -c 'echo "$LD_PRELOAD"' >"$t/ln.out" 2>/dev/null
grep -q '^/proc/[0-9]*/fd/[0-9]*$' "$t/ln.out" || bad ".cutrace a symbolic link: LD_PRELOAD was '$(cat "$t/ln.out")' (expected a memfd)"
[ -z "$(ls -A "$t/elsewhere")" ] || bad ".cutrace a symbolic link: files written through it: $(ls -A "$t/elsewhere")"

# a trace directory on a noexec file system: memfds
if unshare -m --propagation private true 2>/dev/null; then
	mkdir "$t/nx"
	unshare -m --propagation private sh -c 'mount -t tmpfs -o noexec tmpfs "$1" && shift && exec "$@"' sh "$t/nx" \
		"${rig[@]}" "$c" run -o "$t/nx/r" -- sh -c 'echo "preload=$LD_PRELOAD"; python3 -c "import ctypes; ctypes.CDLL(\"libcuda.so.1\").cuInit(0)"' \
		>"$t/nx.out" 2>"$t/nx.err"
	r=$?
	[ $r -eq 0 ] || bad "noexec: run exited $r: $(tail -2 "$t/nx.err")"
	grep -q '^preload=/proc/[0-9]*/fd/[0-9]*:' "$t/nx.out" || bad "noexec: LD_PRELOAD was '$(cat "$t/nx.out")' (expected a memfd)"
	grep -q 'OK CUDA initialized' "$t/nx.err" || bad "noexec: no OK verdict: $(head -3 "$t/nx.err")"
	grep -qi 'ld.so\|cannot be preloaded' "$t/nx.err" && bad "noexec: the loader complained: $(grep -i 'ld.so' "$t/nx.err")"
	nx=" noexec memfd ok;"
else
	nx=" (noexec case left out: no unshare -m here);"
fi
[ $fail -eq 0 ] && echo "ok: one file of $(stat -c %s "$c") bytes (shim and probe inside), alone in a directory: probe, run, show, doctor, --lib, CUTRACE_LIB; group-writable dir and linked .cutrace -> memfd;$nx"
exit $fail
