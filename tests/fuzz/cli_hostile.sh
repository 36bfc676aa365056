#!/usr/bin/env bash
# fuzz_cli_hostile: every ct_mkbad file through `cutrace show` (text and
# JSON) with bounded memory and CPU.  Files it must refuse: exit 2 and one
# line "cutrace: FILE: <reason>" naming the problem.  Damaged but readable
# files: no crash, no exit 2, and the damage counted in the JSON stats.
#   cli_hostile.sh CUTRACE CT_MKBAD WORK_DIR [sanitized]
set -uo pipefail
cutrace=$1 mkbad=$2 work=$3 san=${4:-}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$mkbad" "$d" || exit 1
fails=0 n=0
# ASan reserves terabytes of address space: no ulimit -v for a sanitized CLI
vlimit="ulimit -v 524288;"
[ "$san" = sanitized ] && vlimit=""
check_json() { # FILE KEY: the key's value in the first process's stats is > 0
	python3 - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
st = doc["processes"][0]["stats"]
v = st.get(sys.argv[2], 0)
sys.exit(0 if (v > 0 if isinstance(v, int) else bool(v)) else 1)
PY
}
while IFS=$'\t' read -r name want text; do
	f=$d/$name.cutrace
	for fmt in text json; do
		n=$((n + 1))
		opt=(); [ $fmt = json ] && opt=(--json)
		bash -c "$vlimit ulimit -t 20; exec \"\$0\" show \"\$@\"" "$cutrace" "${opt[@]}" "$f" \
			> "$d/out" 2> "$d/err"
		rc=$?
		why=""
		if [ $rc -ge 128 ]; then
			why="killed by signal $((rc - 128))"
		elif [ "$want" = 2 ]; then
			lines=$(wc -l < "$d/err")
			if [ $rc -ne 2 ]; then why="exit $rc, want 2"
			elif [ "$lines" -ne 1 ]; then why="$lines lines on stderr, want 1"
			elif ! grep -q "^cutrace: .*$name.cutrace: .*$text" "$d/err"; then why="stderr lacks '$text'"
			fi
		else
			if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then why="exit $rc, want 0 or 1"
			elif [ $fmt = json ] && ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$d/out" 2>/dev/null; then
				why="invalid JSON"
			elif [ $fmt = json ] && [ "$text" != - ] && ! check_json "$d/out" "$text"; then
				why="stats.$text is not counted"
			fi
		fi
		if [ -n "$why" ]; then
			fails=$((fails + 1))
			echo "FAIL: $name ($fmt): $why"
			sed 's/^/    stderr: /' "$d/err" | head -5
		else
			echo "ok:   $name ($fmt): exit $rc $(head -c 150 "$d/err" | head -1)"
		fi
	done
done < "$d/MANIFEST"
echo "$n runs, $fails failed"
[ $fails -eq 0 ]
