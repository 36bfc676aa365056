#!/usr/bin/env bash
# rel_own_files: the shim never writes into the program's files.  A
# daemon-like program (rel_datafd) closes 0-2 and its data file becomes fd 2;
# whatever the shim has to say (tracing disabled, debug lines, a malformed
# CUTRACE_INJECT) must not land in that file: it goes to fd 2 only while fd 2
# is the file the process started with, otherwise into the trace's notes.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
RIG_ENV=(LD_LIBRARY_PATH="$FAKECUDA_DIR")
PROG="$REL_BIN/rel_datafd"

# data NAME [VAR=VALUE...] [-- REDIRECT]: run rel_datafd without and with the
# shim (trace directory $T/tr); the data files must be byte-identical
data() {
	local name=$1 envs=() closed=0
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ "${1:-}" = -- ] && closed=1
	rm -rf "$T/tr" "$T/ref.data" "$T/shim.data"
	mkdir -m 700 "$T/tr"
	if [ $closed = 1 ]; then
		env "${RIG_ENV[@]}" LD_PRELOAD="$RIG_PRELOAD" "$PROG" "$T/ref.data" 2>&- < /dev/null > /dev/null
		echo $? > "$T/ref.rc"
		env "${RIG_ENV[@]}" CUTRACE_DIR="$T/tr" "${envs[@]}" LD_PRELOAD="$SHIM_PRELOAD" \
			"$PROG" "$T/shim.data" 2>&- < /dev/null > /dev/null
		echo $? > "$T/shim.rc"
	else
		env "${RIG_ENV[@]}" LD_PRELOAD="$RIG_PRELOAD" "$PROG" "$T/ref.data" 2> "$T/ref.err" < /dev/null > /dev/null
		echo $? > "$T/ref.rc"
		env "${RIG_ENV[@]}" CUTRACE_DIR="$T/tr" "${envs[@]}" LD_PRELOAD="$SHIM_PRELOAD" \
			"$PROG" "$T/shim.data" 2> "$T/shim.err" < /dev/null > /dev/null
		echo $? > "$T/shim.rc"
	fi
	if [ "$(cat "$T/ref.rc")" != 0 ]; then
		bad "$name: the reference run failed (exit $(cat "$T/ref.rc"))"
		return 1
	elif ! cmp -s "$T/ref.rc" "$T/shim.rc"; then
		bad "$name: exit $(cat "$T/shim.rc") with the shim, 0 without"
		return 1
	elif ! cmp -s "$T/ref.data" "$T/shim.data"; then
		bad "$name: the data file differs: $(diff "$T/ref.data" "$T/shim.data" | head -4 | tr '\n' '|')"
		return 1
	fi
	ok "$name: data file byte-identical ($(wc -c < "$T/ref.data") bytes)"
}

: > "$T/afile"
# the trace cannot be created (the directory is a file): "tracing disabled"
data "data file on fd 2, tracing disabled" CUTRACE_DIR="$T/afile"
[ -z "$(ls -A "$T/tr")" ] || bad "  a file was left in $T/tr"
# the trace is created: debug lines ("tracing to ...") at CUTRACE_DEBUG=2
data "data file on fd 2, CUTRACE_DEBUG=2" CUTRACE_DEBUG=2
f=$(one_trace "$T/tr") && ok "  traced" || bad "  no trace in $T/tr"
# both together, with a malformed CUTRACE_INJECT (warned at load time, when
# fd 2 is still the process's own: that line may go there, once)
data "data file on fd 2, malformed CUTRACE_INJECT, tracing disabled" CUTRACE_DIR="$T/afile" CUTRACE_INJECT='%%%'
n=$(grep -c '^cutrace\[' "$T/shim.err")
[ "$n" -le 1 ] && ok "  $n line(s) on the original stderr" || bad "  $n lines on the original stderr: $(head -3 "$T/shim.err" | tr '\n' '|')"

# started with fd 2 closed: the warning about CUTRACE_INJECT becomes a note
data "fd 2 closed at start, malformed CUTRACE_INJECT" CUTRACE_INJECT='%%%' --
if ! f=$(one_trace "$T/tr"); then
	bad "  no trace in $T/tr"
else
	"$CUTRACE" show "$f" > "$T/show.txt" 2>&1
	"$CUTRACE" show --json "$f" > "$T/show.json" 2>&1
	if grep -q 'note .*warning.*CUTRACE_INJECT' "$T/show.txt"; then
		ok "  show prints the warning as a note: $(grep -m1 'note .*CUTRACE_INJECT' "$T/show.txt" | cut -c1-110)"
	else
		bad "  show prints no note for the warning: $(grep -m3 'note\|trace ' "$T/show.txt" | tr '\n' '|')"
	fi
	if "$PYTHON3" -c 'import json,sys; j=json.load(open(sys.argv[1])); p=j["processes"][0] if "processes" in j else j; s=json.dumps(p); sys.exit(0 if "CUTRACE_INJECT" in s and "warning" in s else 1)' "$T/show.json" 2> /dev/null; then
		ok "  JSON has the note"
	else
		bad "  JSON lacks the note"
	fi
	if "$PYTHON3" -c 'import json,sys; j=json.load(open(sys.argv[1])); p=j["processes"][0] if "processes" in j else j; sys.exit(1 if p["flags"]["degraded"] else 0)' "$T/show.json" 2> /dev/null; then
		ok "  a warning does not mark the trace degraded"
	else
		bad "  the trace is marked degraded (or the JSON is unreadable)"
	fi
fi
finish
