#!/usr/bin/env bash
# rooms_include_paths: include_paths.sh LIST SOURCE_DIR GEN_DIR
# LIST (written by tests/rooms/tests.cmake) has one line per target:
# NAME=DIR;DIR;...  The shim may see only shim/, shim/include and common/
# (with the generated tables); no tracer room may see shim/ but the format
# header, and the common room nothing of the tracer.
set -u
list=$1 src=$2 gen=$3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ -s "$list" ] || { echo "no $list"; exit 1; }
while IFS= read -r line; do
	name=${line%%=*}
	IFS=';' read -r -a dirs <<< "${line#*=}"
	n=0
	for d in "${dirs[@]}"; do
		[ -n "$d" ] || continue
		n=$((n + 1))
		case $name in
		shim)
			case $d in
			"$src/shim" | "$src/shim/include" | "$src/common" | "$gen") ;;
			*) fail "the shim's include path has $d" ;;
			esac ;;
		tracer:common)
			case $d in
			"$src/common" | "$src/shim/include" | "$gen") ;;
			*) fail "the common room's include path has $d" ;;
			esac ;;
		tracer:*)
			case $d in
			"$src/shim/include") ;;
			"$src/shim" | "$src/shim/"*) fail "$name sees the shim's $d" ;;
			esac ;;
		esac
	done
	[ "$n" -gt 0 ] || fail "$name: no include directories listed"
	echo "$name: $n include director$([ $n = 1 ] && echo y || echo ies)"
done < "$list"
# and the sources agree: nothing in shim/ or common/ names a tracer header
for f in "$src"/shim/*.[ch] "$src"/common/*.[ch]; do
	while read -r inc; do
		h=${inc#*\"}; h=${h%%\"*}
		[ -f "$(dirname "$f")/$h" ] || [ -f "$src/shim/include/$h" ] || [ -f "$src/common/$h" ] ||
			[ -f "$gen/$h" ] || [ -f "$src/shim/$h" ] ||
			fail "$f includes \"$h\", which is neither in shim/, common/ nor the format header"
	done < <(grep -h '^#include "' "$f")
done
[ "$fails" -eq 0 ] && echo "rooms_include_paths: ok"
[ "$fails" -eq 0 ]
