#!/usr/bin/env bash
# rel_threads: hooks called from signal handlers and from many threads at
# once; fork from a multi-threaded process; vfork + exec, posix_spawn; exec
# chains.  The programs check every result themselves; rel_check then finds
# exactly the calls they made in the traces (nothing torn, doubled or lost).
# librel_fakedev.so (lock-free, async-signal-safe) stands in for the driver.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
PRE="$SHIM $FAKEDEV"

kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }

# ---- signals + 8 threads ------------------------------------------------------------
d=$T/sig && mkdir -p "$d"
run3 "$T/s" timeout 120 env CUTRACE_DIR="$d" CUTRACE_SIZE=64M LD_PRELOAD="$PRE" "$REL_BIN/rel_sig" -t 8 -n 3000
out=$(cat "$T/s.out")
calls=$(kv "$out" calls) hcalls=$(kv "$out" handler_calls)
if [ "$(cat "$T/s.rc")" != 0 ]; then
	bad "signals + threads: exit $(cat "$T/s.rc"): $out $(head -c 300 "$T/s.err")"
elif ! f=$(one_trace "$d"); then
	bad "signals + threads: no trace"
else
	c=$("$REL_CHECK" count "$f" | tr '\n' ' ')
	want=$((calls + hcalls))
	if [ "$(kv "$c" marked)" = "$want" ] && [ "$(kv "$c" from_signal)" = "$hcalls" ] &&
		[ "$(kv "$c" dups)" = 0 ] && [ "$(kv "$c" unfinished)" = 0 ] && [ "$(kv "$c" torn)" = 0 ] &&
		[ "$(kv "$c" malformed)" = 0 ] && [ "$(kv "$c" opens)" = "$want" ] &&
		[ "$(kv "$c" closes)" = "$want" ] && [ "$(kv "$c" mismatched)" = 0 ] && [ "${hcalls:-0}" -gt 20 ]; then
		ok "signals + 8 threads: $calls thread calls and $hcalls from handlers, all traced once, errno kept"
	else
		bad "signals + threads: program says $out; trace says $c"
	fi
fi

# ---- fork from a multi-threaded process, vfork, posix_spawn ---------------------------
d=$T/fork && mkdir -p "$d"
run3 "$T/f" timeout 120 env CUTRACE_DIR="$d" CUTRACE_SIZE=64M LD_PRELOAD="$PRE" "$REL_BIN/rel_fork" threads
if [ "$(cat "$T/f.rc")" != 0 ] || ! grep -q "forks=20 vforks=5 spawns=5" "$T/f.out"; then
	bad "fork/vfork/posix_spawn: exit $(cat "$T/f.rc"): $(cat "$T/f.out") $(head -c 300 "$T/f.err")"
else
	n=0 forked=0 one=0 problems=""
	for f in "$d"/*.cutrace; do
		n=$((n + 1))
		c=$("$REL_CHECK" count "$f" | tr '\n' ' ')
		fl=$("$REL_CHECK" ctx "$f" | sed -n 's/.*flags=//p')
		[ $((fl & 0x10)) != 0 ] && forked=$((forked + 1))
		[ "$(kv "$c" marked)" = 1 ] && one=$((one + 1))
		for k in dups unfinished torn malformed mismatched dropped orphan_exits; do
			[ "$(kv "$c" $k)" = 0 ] || problems="$problems $(basename "$f"):$k=$(kv "$c" $k)"
		done
	done
	if [ $n = 31 ] && [ $forked = 20 ] && [ $one = 30 ] && [ -z "$problems" ]; then
		ok "fork x20 from 4 busy threads, vfork+exec x5, posix_spawn x5: 31 clean traces, 20 marked forked"
	else
		bad "fork/vfork/posix_spawn: $n traces (want 31), $forked forked (20), $one with one call (30)$problems"
	fi
	[ -s "$T/f.err" ] && bad "fork/vfork/posix_spawn: stderr: $(head -c 200 "$T/f.err")"
fi

# ---- exec chain ----------------------------------------------------------------------
d=$T/chain && mkdir -p "$d"
run3 "$T/c" timeout 60 env CUTRACE_DIR="$d" LD_PRELOAD="$PRE" "$REL_BIN/rel_fork" chain 5
pids=$(for f in "$d"/*.cutrace; do "$REL_CHECK" ctx "$f" | sed -n 's/^pid=\([0-9]*\).*/\1/p'; done | sort -u | wc -l)
marks=$(for f in "$d"/*.cutrace; do "$REL_CHECK" count "$f" | tr ' ' '\n' | sed -n 's/^marked=//p'; done | sort -u | tr '\n' ' ')
if [ "$(cat "$T/c.rc")" = 0 ] && [ "$(ls "$d"/*.cutrace | wc -l)" = 6 ] && [ "$pids" = 1 ] && [ "$marks" = "1 " ]; then
	ok "exec chain of 6 images (one pid): 6 traces, one call each"
else
	bad "exec chain: exit $(cat "$T/c.rc"), $(ls "$d" | wc -l) traces, $pids pid(s), calls per trace: $marks"
fi
finish
