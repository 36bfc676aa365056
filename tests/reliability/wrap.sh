#!/usr/bin/env bash
# rel_ring_wrap: 8 threads through the real shim into a 256K trace, so the
# ring wraps dozens of times.  The init phase must survive whole, the calls
# present per thread must be a prefix (init area) and a suffix (newest), no
# record torn or doubled, and records + overwritten + dropped must equal the
# records written.  A first run with a large trace checks that the count of
# records written (2 per call) is what the checker assumes.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
threads=8 init=24

# no wrap: every record written is read
d=$T/nowrap
mkdir -p "$d"
env CUTRACE_DIR="$d" CUTRACE_SIZE=64M LD_PRELOAD="$SHIM_PRELOAD" \
	"$REL_BIN/rel_busy" -t $threads -n 500 -i $init -d "$d/done" > "$d/out" 2> "$d/err"
rc=$?
if [ $rc -ne 0 ] || ! tr=$(one_trace "$d"); then
	bad "reference run: exit $rc, $(ls "$d")"
else
	out=$("$REL_CHECK" busy "$tr" "$d/done")
	want=$((2 * (1 + init + threads * 500 + 1)))
	got=$(echo "$out" | sed -n 's/.* records=\([0-9]*\).*/\1/p')
	if [ $? -ne 0 ] || [ "$got" != "$want" ]; then
		bad "reference run: $got records, want $want: $(echo "$out" | head -3 | tr '\n' '|')"
	else
		ok "reference run (64M): $got records = 2 per call, nothing dropped"
	fi
fi

# round 4: more threads than the file has commit counters (48): the first 47
# count without a lock, the rest share counter 0 with a lock (ring.h,
# ct_ring_count); a lost count shows as records + overwritten + dropped
# falling short of the records written
# round 5: a 16M trace, where a busy writer's runs grow from 256 to 4096
# slots (ring.h, CT_CHUNK_MAX), lapped a few times over
for round in 1 2 3 4 5; do
	d=$T/wrap$round
	size=256K calls=24000
	[ $round = 4 ] && threads=60
	[ $round = 5 ] && threads=8 size=16M calls=400000
	mkdir -p "$d"
	env CUTRACE_DIR="$d" CUTRACE_SIZE=$size LD_PRELOAD="$SHIM_PRELOAD" \
		"$REL_BIN/rel_busy" -t $threads -n $((calls / threads)) -i $init -d "$d/done" > "$d/out" 2> "$d/err"
	rc=$?
	if [ $rc -ne 0 ] || ! tr=$(one_trace "$d"); then
		bad "wrap round $round: exit $rc $(head -c 200 "$d/err")"
		continue
	fi
	if out=$("$REL_CHECK" wrap "$tr" "$d/done"); then
		ok "wrap round $round ($size, $threads threads): $(echo "$out" | tr '\n' ' ' | cut -c1-230)"
	else
		bad "wrap round $round: $(echo "$out" | head -8 | tr '\n' '|')"
	fi
	if ! "$CUTRACE" show --json "$tr" > /dev/null 2> "$d/show.err" && [ $? -gt 1 ]; then
		bad "wrap round $round: cutrace show --json failed: $(head -c 200 "$d/show.err")"
	fi
done
finish
