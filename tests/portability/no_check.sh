#!/usr/bin/env bash
# A machine without Check (a GPU node, a container): configuring with the
# default CUTRACE_TESTS (AUTO) still builds cutrace and libcutrace.so and says
# in one line that the tests are off and why; -DCUTRACE_TESTS=ON fails
# loudly; OFF configures silently.  Check is hidden from pkg-config by a
# module directory that has every .pc file of this machine but check.pc.
#
#   no_check.sh SOURCE_DIR CUDA_INCLUDE_DIR
set -uo pipefail
src=${1:?usage: no_check.sh SOURCE_DIR CUDA_INCLUDE_DIR}
cuda_inc=${2:?}
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

mkdir "$t/pc"
for d in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
	for f in "$d"/*.pc; do
		[ -e "$f" ] || continue
		b=${f##*/}
		[ "$b" = check.pc ] || [ -e "$t/pc/$b" ] || ln -s "$f" "$t/pc/$b"
	done
done
export PKG_CONFIG_LIBDIR=$t/pc PKG_CONFIG_PATH=
pkg-config --exists check && { echo "FAIL: check.pc still visible"; exit 1; }

cfg() { # dir [cmake args...]: configure, output in dir.log
	local b=$1
	shift
	cmake -S "$src" -B "$t/$b" -DCUTRACE_CUDA_INCLUDE_DIR="$cuda_inc" "$@" >"$t/$b.log" 2>&1
}

# AUTO: builds, one line says why the tests are off
cfg auto
r=$?
[ $r -eq 0 ] || bad "configure without Check (AUTO) failed ($r): $(grep -m3 -i error "$t/auto.log")"
n=$(grep -ci 'tests are off' "$t/auto.log")
[ "$n" -eq 1 ] || bad "$n lines say the tests are off (expected 1)"
grep -i 'tests are off' "$t/auto.log" | grep -q 'Check' || bad "the line does not say Check is missing: $(grep -i 'tests are off' "$t/auto.log")"
if [ $r -eq 0 ]; then
	cmake --build "$t/auto" -j2 --target cutrace cutrace_shim cutrace-probe >"$t/build.log" 2>&1 ||
		bad "build without Check failed: $(grep -m3 -i error "$t/build.log")"
	for f in bin/cutrace bin/cutrace-probe lib/libcutrace.so; do
		[ -f "$t/auto/$f" ] || bad "no $f"
	done
	"$t/auto/bin/cutrace" --version >/dev/null || bad "the cutrace built without Check does not run"
	[ -e "$t/auto/tests" ] && bad "the tests were configured anyway ($t/auto/tests exists)"
fi

# ON: fails, naming Check
cfg on -DCUTRACE_TESTS=ON
r=$?
[ $r -ne 0 ] || bad "-DCUTRACE_TESTS=ON without Check configured fine (expected a failure)"
grep -q 'needs Check' "$t/on.log" || bad "-DCUTRACE_TESTS=ON: no 'needs Check' in the error: $(grep -m2 -i error "$t/on.log")"

# OFF: quiet
cfg off -DCUTRACE_TESTS=OFF
r=$?
[ $r -eq 0 ] || bad "-DCUTRACE_TESTS=OFF failed ($r)"
grep -qi 'tests are off' "$t/off.log" && bad "-DCUTRACE_TESTS=OFF still prints the note"

[ $fail -eq 0 ] && echo "ok: without Check: AUTO builds cutrace, cutrace-probe, libcutrace.so and says '$(grep -i 'tests are off' "$t/auto.log" | cut -c1-70)...'; ON fails naming Check; OFF is quiet"
exit $fail
