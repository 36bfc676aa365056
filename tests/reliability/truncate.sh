#!/usr/bin/env bash
# rel_truncate: a trace file truncated or replaced under a running program
# never kills it.  rel_trunc runs 8 threads recording open/ioctl/close and,
# mid-run, truncates its own trace file (to 0, logrotate's copytruncate, to
# 8 KiB, to 0 and back, or renames a new file over it); with its own SIGBUS
# handler installed before or after, through sigaction or signal(), that
# handler must still get the program's own SIGBUS, and with the default
# action the program must still die of it.  Output and exit status compared
# with a run without the shim; every case repeated.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
RIG_ENV=(LD_LIBRARY_PATH="$FAKECUDA_DIR")
PROG="$REL_BIN/rel_trunc"
ITERS=${REL_TRUNC_ITERS:-1500}
REPEAT=${REL_TRUNC_REPEAT:-3}

# tc MODE HANDLER: REPEAT runs with the shim against one without
tc() {
	local mode=$1 handler=$2 i fails=0 f
	rm -rf "$T/ref.d" && mkdir -m 700 "$T/ref.d"
	run3 "$T/ref" env "${RIG_ENV[@]}" LD_PRELOAD="$RIG_PRELOAD" "$PROG" "$mode" "$T/ref.d" "$ITERS" "$handler"
	for i in $(seq "$REPEAT"); do
		rm -rf "$T/tr" && mkdir -m 700 "$T/tr"
		run3 "$T/shim" env "${RIG_ENV[@]}" CUTRACE_DIR="$T/tr" CUTRACE_SIZE=1M \
			LD_PRELOAD="$SHIM_PRELOAD" "$PROG" "$mode" "$T/tr" "$ITERS" "$handler"
		if ! compare_runs "$mode, handler $handler, run $i" "$T/ref" "$T/shim" > "$T/cmp" 2>&1; then
			cat "$T/cmp"
			N_CASES=$((N_CASES + 1)) N_FAIL=$((N_FAIL + 1))
			fails=1
			break
		fi
		f=$(ls "$T/tr"/*.cutrace 2> /dev/null | head -1)
		if [ -z "$f" ]; then
			bad "$mode, handler $handler, run $i: no trace file was made (nothing was truncated)"
			fails=1
			break
		fi
	done
	[ $fails = 0 ] && ok "$mode, handler $handler: $REPEAT runs as without the shim: $(head -1 "$T/ref.out")$( [ "$handler" != none ] && printf '; %s' "$(tail -1 "$T/ref.out")") (exit $(cat "$T/ref.rc"))"
}

for m in zero copytrunc shrink regrow replace none; do
	tc "$m" none
done
tc zero early
tc zero late
tc zero signal
tc copytrunc late
tc zero dfl
tc none late
# the trace after a copytruncate: the copy is readable, the file was emptied
rm -rf "$T/tr" && mkdir -m 700 "$T/tr"
env "${RIG_ENV[@]}" CUTRACE_DIR="$T/tr" CUTRACE_SIZE=1M LD_PRELOAD="$SHIM_PRELOAD" "$PROG" copytrunc "$T/tr" "$ITERS" none > /dev/null 2>&1
c=$(ls "$T/tr"/*.cutrace.1 2> /dev/null | head -1)
if [ -n "$c" ] && [ "$(stat -c %s "${c%.1}")" = 0 ]; then
	cp "$c" "$T/copy.cutrace"
	"$CUTRACE" show "$T/copy.cutrace" > "$T/copy.txt" 2>&1
	[ $? -le 1 ] && ok "copytruncate: the copy is a readable trace, the file stays empty" || bad "copytruncate: the copy is unreadable: $(head -2 "$T/copy.txt")"
else
	bad "copytruncate: no copy, or the file is not empty afterwards"
fi
finish
