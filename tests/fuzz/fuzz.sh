#!/usr/bin/env bash
# fuzz_short: a bounded libFuzzer run over fuzz_trace.c, seeded with cropped
# real traces and the regression inputs.  Skips (77) without a fuzzer binary.
#   fuzz.sh FUZZER CT_CROP FIXTURE_DIR REGRESSION_DIR WORK_DIR SECONDS
# The corpus grows in WORK_DIR/corpus across runs; a crash leaves its input
# in WORK_DIR/artifacts/ -- copy it to tests/fuzz/regressions/ (see
# RELIABILITY.md) so that unit_fuzz_replay keeps replaying it.
set -uo pipefail
fuzzer=$1 crop=$2 fix=$3 regr=$4 work=$5 secs=$6
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$fuzzer" ]; then
	echo "no libFuzzer binary at $fuzzer (needs clang with -fsanitize=fuzzer): skipped"
	exit 77
fi
. "$here/seeds.sh"
make_seeds "$crop" "$fix" "$work/seeds" || { echo "FAIL: cannot build the seed corpus"; exit 1; }
mkdir -p "$work/corpus" "$work/artifacts"
log=$work/fuzz_short.log
# -error_exitcode: libFuzzer's default (77) would read as "skipped" to ctest
ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=131072 \
	-error_exitcode=1 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
	"$work/corpus" "$work/seeds" "$regr" > "$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
echo "fuzz_short: ${execs:-?} executions in ${secs}s, corpus $(ls "$work/corpus" | wc -l) inputs, exit $rc"
echo "$(date -u +%FT%TZ) execs=${execs:-?} secs=$secs rc=$rc" >> "$work/fuzz_history.txt"
if [ "$rc" -ne 0 ]; then
	grep -E "ERROR|SUMMARY|==[0-9]+==|runtime error|Test unit written" "$log" | head -40
	echo "FAIL: the fuzzer found a problem; its input is in $work/artifacts/"
	echo "      copy it to tests/fuzz/regressions/ (unit_fuzz_replay replays it)"
	exit 1
fi
