#!/usr/bin/env bash
# rel_security: trace files are created 0600 with O_EXCL|O_NOFOLLOW in a
# directory the user owns; a world-writable directory without the sticky bit
# is refused; the environment snapshot is an allowlist; the command line is
# bounded with its full length recorded; `cutrace run` passes arguments
# without a shell.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
RIG_ENV=(LD_LIBRARY_PATH="$FAKECUDA_DIR")
NS=1600000000123456789

# ---- something planted at the trace path ---------------------------------------------
# plant WHAT N: the first N names the shim will try get WHAT; rel_busy runs once.
plant() {
	local what=$1 n=$2 d=$T/p-$1-$2
	rm -rf "$d" "$T/victim" "$T/planted" && mkdir -p "$d" && chmod 700 "$d"
	printf 'victim\n' > "$T/victim"
	touch -d @1000000000 "$T/victim"
	run3 "$T/p" env "${RIG_ENV[@]}" CUTRACE_DIR="$d" REL_FAKE_REALTIME_NS=$NS \
		LD_PRELOAD="$FAKECLOCK $SHIM_PRELOAD" timeout 20 \
		"$REL_BIN/rel_plant" "$d" "$what" "$n" "$REL_BIN/rel_busy" -t 1 -n 3 -i 1
	PLANT_DIR=$d
}
victim_intact() {
	[ "$(cat "$T/victim")" = victim ] && [ "$(stat -c %Y "$T/victim")" = 1000000000 ]
}
for what in symlink file fifo; do
	plant $what 1
	first=$(head -1 "$T/planted" 2>/dev/null)
	new=$(ls "$PLANT_DIR"/*-1.cutrace 2>/dev/null)
	if [ "$(cat "$T/p.rc")" != 0 ]; then
		bad "$what planted at the trace path: the program failed: $(head -c 200 "$T/p.err")"
	elif ! victim_intact; then
		bad "$what planted at the trace path: the victim file was written through it"
	elif [ $what = file ] && [ "$(cat "$first")" != precious ]; then
		bad "$what planted at the trace path: the planted file was changed"
	elif [ $what = symlink ] && [ ! -L "$first" ]; then
		bad "$what planted at the trace path: the symlink was replaced"
	elif [ -z "$new" ] || [ "$(stat -c %a "$new")" != 600 ] || [ -L "$new" ]; then
		bad "$what planted at the trace path: no fresh 0600 trace at the next name ($(ls -l "$PLANT_DIR" | tail -n +2 | tr '\n' '|'))"
	elif ! "$REL_CHECK" count "$new" | grep -q "marked=4 "; then
		bad "$what planted at the trace path: the fresh trace lacks the calls"
	elif [ -s "$T/p.err" ]; then
		bad "$what planted at the trace path: stderr: $(head -c 200 "$T/p.err")"
	else
		ok "$what planted at the trace path: left alone, trace written to $(basename "$new") (0600)"
	fi
done
plant symlink 8
if [ "$(cat "$T/p.rc")" = 0 ] && victim_intact && [ "$(ls "$PLANT_DIR" | wc -l)" = 8 ] &&
	[ "$(shim_lines "$T/p.err")" = 1 ] && grep -q "rel_busy ok" "$T/p.out"; then
	ok "all 8 candidate names planted: one warning, no trace, program unharmed ($(grep -m1 '^cutrace\[' "$T/p.err" | cut -c1-100))"
else
	bad "all 8 names planted: rc $(cat "$T/p.rc"), $(ls "$PLANT_DIR" | wc -l) files, stderr $(head -c 200 "$T/p.err")"
fi

# ---- directory permissions ---------------------------------------------------------
run3 "$T/ref" env "${RIG_ENV[@]}" LD_PRELOAD="$RIG_PRELOAD" "$PROBE"
mkdir -p "$T/ww" && chmod 0777 "$T/ww"
run3 "$T/w" env "${RIG_ENV[@]}" CUTRACE_DIR="$T/ww" LD_PRELOAD="$SHIM_PRELOAD" "$PROBE"
if compare_runs "world-writable directory without sticky bit: program unharmed" "$T/ref" "$T/w" 1 &&
	[ -z "$(ls -A "$T/ww")" ] && grep -q "world-writable" "$T/w.err"; then
	ok "  refused with one warning, nothing written"
else
	bad "  world-writable directory: files $(ls -A "$T/ww" | tr '\n' ' '), stderr $(head -c 200 "$T/w.err")"
fi
mkdir -p "$T/sticky" && chmod 1777 "$T/sticky"
run3 "$T/s" env "${RIG_ENV[@]}" CUTRACE_DIR="$T/sticky" LD_PRELOAD="$SHIM_PRELOAD" "$PROBE"
f=$(one_trace "$T/sticky") && [ "$(stat -c %a "$f")" = 600 ] && [ ! -s "$T/s.err" ] &&
	ok "world-writable directory with the sticky bit: accepted, trace 0600" ||
	bad "sticky directory: $(ls -l "$T/sticky" | tr '\n' '|') $(head -c 200 "$T/s.err")"
"$CUTRACE" run -o "$T/ww" -- true > /dev/null 2> "$T/run.err"
rc=$?
[ $rc = 2 ] && grep -q "world-writable" "$T/run.err" &&
	ok "cutrace run -o <world-writable dir>: refused, exit 2" ||
	bad "cutrace run -o <world-writable dir>: exit $rc, $(head -c 200 "$T/run.err")"

# ---- the environment snapshot is an allowlist ----------------------------------------
mkdir -p "$T/env"
secrets=(AWS_SECRET_ACCESS_KEY=s3cr3t-aws GITHUB_TOKEN=s3cr3t-gh MY_PASSWORD=s3cr3t-pw
	CUDA_API_KEY=s3cr3t-cudakey NVIDIA_API_TOKEN=s3cr3t-nvtok CUTRACE_SECRET=s3cr3t-ct
	CUDA_PASSWD=s3cr3t-passwd HF_TOKEN=s3cr3t-hf DATABASE_URL=postgres://u:s3cr3t-db@h/x
	NCCL_CREDENTIALS=s3cr3t-nccl SSH_AUTH_SOCK=/tmp/s3cr3t-ssh)
run3 "$T/e" env "${RIG_ENV[@]}" "${secrets[@]}" CUDA_VISIBLE_DEVICES=0 CUDA_CACHE_PATH=/allowed-marker \
	CUTRACE_DIR="$T/env" LD_PRELOAD="$SHIM_PRELOAD" "$PROBE"
f=$(one_trace "$T/env")
if [ -z "$f" ]; then
	bad "secrets in the environment: no trace"
elif grep -aq "s3cr3t" "$f"; then
	bad "secrets in the environment: found in the trace: $(grep -ao 's3cr3t[a-z-]*' "$f" | sort -u | tr '\n' ' ')"
elif ! "$REL_CHECK" ctx "$f" | grep -q "env=CUDA_CACHE_PATH=/allowed-marker" ||
	! "$REL_CHECK" ctx "$f" | grep -q "env=CUDA_VISIBLE_DEVICES=0"; then
	bad "secrets in the environment: the allowlisted variables are missing too (test broken?)"
else
	ok "${#secrets[@]} secret variables never reach the trace (allowlisted CUDA_* do)"
fi

# ---- the command line is bounded, its full length recorded --------------------------
mkdir -p "$T/cmd"
big=$(head -c 100000 /dev/zero | tr '\0' 'A')
argv=("$REL_BIN/rel_busy" -t 1 -n 1 -i 1 "$big" tail)
run3 "$T/c" env "${RIG_ENV[@]}" CUTRACE_DIR="$T/cmd" LD_PRELOAD="$SHIM_PRELOAD" "${argv[@]}"
want=0
for a in "${argv[@]}"; do want=$((want + ${#a} + 1)); done
f=$(one_trace "$T/cmd")
ctx=$([ -n "$f" ] && "$REL_CHECK" ctx "$f")
bytes=$(echo "$ctx" | sed -n 's/^cmdline_bytes=//p')
len=$(echo "$ctx" | sed -n 's/^cmdline_len=//p')
trunc=$("$CUTRACE" show --json "$f" 2>/dev/null | "$PYTHON3" -c 'import json,sys; print(json.load(sys.stdin)["processes"][0]["cmdline_truncated"])')
if [ -n "$f" ] && [ "${bytes:-0}" -gt 0 ] && [ "$bytes" -le 4096 ] && [ "$len" = "$want" ] &&
	[ "$trunc" = True ]; then
	ok "100 KB command line: $bytes bytes kept, full length $len recorded, shown as truncated"
else
	bad "100 KB command line: kept ${bytes:-?} bytes, length ${len:-?} (want $want), cmdline_truncated $trunc"
fi

# ---- cutrace run passes arguments without a shell -------------------------------------
mkdir -p "$T/run"
out=$("$CUTRACE" run -q -o "$T/run" -- sh -c 'printf "%s|" "$0" "$@"' 'a;b' '$(id -u)' '*' '`true`' 'x y' '' 2> "$T/run.err")
rc=$?
want='a;b|$(id -u)|*|`true`|x y||'
[ "$out" = "$want" ] && [ $rc = 0 ] && ok "cutrace run -- sh -c ... passes $want literally" ||
	bad "cutrace run argument passing: got '$out' (exit $rc), want '$want'"
"$CUTRACE" run -q -o "$T/run" -- sh -c 'exit 7' 2> /dev/null
rc=$?
[ $rc = 7 ] && ok "cutrace run passes the exit status (7)" || bad "cutrace run exit status $rc, want 7"
"$CUTRACE" run -q -o "$T/run" -- /nonexistent/program 2> "$T/run.err"
rc=$?
[ $rc = 127 ] && ok "cutrace run of a missing program: 127" || bad "cutrace run of a missing program: exit $rc"
finish
