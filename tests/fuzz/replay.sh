#!/usr/bin/env bash
# unit_fuzz_replay: every regression input, every ct_mkbad hostile file and
# the cropped real traces through the fuzz target (fuzz_trace.c).  In the
# sanitizer sub-build the same binary is ASan+UBSan instrumented.
#   replay.sh FUZZ_REPLAY CT_MKBAD CT_CROP REGRESSION_DIR FIXTURE_DIR WORK_DIR
set -euo pipefail
replay=$1 mkbad=$2 crop=$3 regr=$4 fix=$5 work=$6
here=$(cd "$(dirname "$0")" && pwd)
. "$here/seeds.sh"
mkdir -p "$work"
bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
"$mkbad" "$bad"
rm -f "$bad/MANIFEST"
make_seeds "$crop" "$fix" "$work/seeds"
n_regr=$(find "$regr" -maxdepth 1 -type f ! -name '.*' ! -name '*.md' | wc -l)
echo "regressions: $n_regr, hostile files: $(ls "$bad" | wc -l), seeds: $(ls "$work/seeds" | wc -l)"
args=("$bad" "$work/seeds")
[ "$n_regr" -gt 0 ] && args+=("$regr")
"$replay" "${args[@]}"
