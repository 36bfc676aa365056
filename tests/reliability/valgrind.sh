#!/usr/bin/env bash
# rel_valgrind: the shim's integration under memcheck.  The shim is never
# run under ASan (it is preloaded into uninstrumented programs, and an ASan
# runtime must come first in the library list), so this is where its memory
# errors show: invalid reads/writes, uninitialised values reaching system
# calls or branches, bad frees.  Each rig program runs with the shim under
# valgrind --error-exitcode=99 and must exit as it does without valgrind,
# with the same stdout.  Skips with 77 without valgrind.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
command -v valgrind > /dev/null || { echo "valgrind not installed"; exit 77; }
VG=(valgrind -q --error-exitcode=99 --trace-children=no --child-silent-after-fork=yes)
# valgrind 3.19 cannot read clang 14's DWARF 5 debug info (then every run fails)
if valgrind -q "$PROBE" --help 2>&1 >/dev/null | grep -q "Serious error when reading debug info"; then
	echo "this valgrind cannot read the debug info of this build (DWARF 5 from clang?): skipped"
	exit 77
fi

vg() { # NAME PROGRAM ARGS...
	local name=$1 d=$T/vg$N_CASES
	shift
	mkdir -p "$d"
	run3 "$T/r" env LD_LIBRARY_PATH="$FAKECUDA_DIR" CUTRACE_DIR="$d/r" LD_PRELOAD="$SHIM_PRELOAD" "$@"
	run3 "$T/v" env LD_LIBRARY_PATH="$FAKECUDA_DIR" CUTRACE_DIR="$d/v" LD_PRELOAD="$SHIM_PRELOAD" "${VG[@]}" "$@"
	if [ "$(cat "$T/v.rc")" = 99 ]; then
		bad "$name: memcheck errors: $(grep -E '==[0-9]+== (Invalid|Conditional|Syscall|Use of|Mismatched|Source|Address|   at|    by)' "$T/v.err" | head -8 | tr '\n' '|')"
	elif ! cmp -s "$T/r.rc" "$T/v.rc" || ! cmp -s "$T/r.out" "$T/v.out"; then
		bad "$name: under valgrind exit $(cat "$T/v.rc") (want $(cat "$T/r.rc")), stdout $(diff "$T/r.out" "$T/v.out" | head -3 | tr '\n' '|')"
	elif ! ls "$d/v"/*.cutrace > /dev/null 2>&1; then
		bad "$name: no trace written under valgrind"
	else
		ok "$name: no memcheck error, exit $(cat "$T/v.rc")"
	fi
}
mkdir -p "$T/w"
vg "cutrace-probe --ctx --nvml (dlopen/dlsym path)" "$PROBE" --ctx --nvml
[ -x "$PROG_DIR/probe_linked" ] && vg "probe_linked --ctx --mem (linked path)" "$PROG_DIR/probe_linked" --ctx --mem
[ -x "$PROG_DIR/rt_shared" ] && vg "rt_shared (real libcudart, cuGetProcAddress)" "$PROG_DIR/rt_shared"
[ -x "$PROG_DIR/fork_probe" ] && vg "fork_probe (fork child)" "$PROG_DIR/fork_probe"
vg "rel_errno (every hook, success and failure)" "$REL_BIN/rel_errno" "$T/w"
vg "rel_busy 4 threads x 300 ioctls" "$REL_BIN/rel_busy" -t 4 -n 300
vg "rel_closefds" "$REL_BIN/rel_closefds" "$T/w/closefds.out"
vg "rel_mt" "$REL_BIN/rel_mt"
finish
