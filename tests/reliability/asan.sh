#!/usr/bin/env bash
# asan: the ASan+UBSan build of the tracer and the unit tests, as one test of
# the normal suite.  Configures SOURCE into BUILD with -DCUTRACE_SANITIZE=ON
# (and -DCUTRACE_ASAN_SUBBUILD=ON, so this test is not added there again),
# builds it and runs its unit tests (^unit_, which includes the fuzz
# regression replay; tests labelled no_asan -- e.g. ones that measure memory,
# which ASan's allocator inflates -- are left out).  The shim and the rig doubles are never instrumented
# (shim/CMakeLists.txt, tests/rig/tests.cmake); tests that preload the shim
# are not run here (tests/reliability/valgrind.sh covers the shim).
# The compiler: $CUTRACE_ASAN_CC, else clang when it has libFuzzer (the
# sub-build then also builds tests/fuzz's fuzz_trace for fuzz_short), else
# the main tree's compiler.
#   asan.sh SOURCE BUILD MAIN_CC
set -u
src=$1 build=$2 main_cc=$3
jobs=$(nproc 2>/dev/null || echo 2)
cc=${CUTRACE_ASAN_CC:-}
if [ -z "$cc" ] && command -v clang > /dev/null &&
	echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d[0] + (int)n; }' |
	clang -x c -fsanitize=fuzzer,address -o /dev/null - 2> /dev/null; then
	cc=$(command -v clang)
fi
[ -n "$cc" ] || cc=$main_cc
# a cache from another compiler cannot be reused
if [ -f "$build/CMakeCache.txt" ] && ! grep -q "^CMAKE_C_COMPILER:.*=$cc\$" "$build/CMakeCache.txt"; then
	rm -rf "$build"
fi
t0=$(date +%s)
echo "asan: configuring $build with $cc"
cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCUTRACE_SANITIZE=ON -DCUTRACE_TESTS=ON -DCUTRACE_ASAN_SUBBUILD=ON > "$build.configure.log" 2>&1 ||
	{ tail -30 "$build.configure.log"; echo "FAIL: configure"; exit 1; }
cmake --build "$build" -j "$jobs" > "$build.build.log" 2>&1 ||
	{ grep -E "error|Error" "$build.build.log" | head -30; echo "FAIL: build"; exit 1; }
t1=$(date +%s)
# gcc's ASan runtime is a shared library: tests that preload the rig's
# libfakenv.so into a sanitized cutrace need the link-order check off
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:verify_asan_link_order=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd "$build" && ctest -R '^unit_' -LE no_asan -j "$jobs" --output-on-failure --timeout 300)
rc=$?
t2=$(date +%s)
echo "asan: configure+build $((t1 - t0)) s, unit tests $((t2 - t1)) s, compiler $cc, exit $rc"
exit $rc
