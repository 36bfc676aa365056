#!/usr/bin/env bash
# `cmake --install BUILD --prefix P` gives a tree that works from where it
# lies: P/bin/cutrace finds P/lib/cutrace/libcutrace.so and
# P/libexec/cutrace/cutrace-probe with no option (probe over the rig: OK,
# its trace names the installed probe; run: LD_PRELOAD is the installed
# shim), the man page reads with man -l, the documents are there.
#
#   tree.sh CMAKE BUILD_DIR FAKENV FAKECUDA_DIR
set -uo pipefail
cmake=${1:?usage: tree.sh CMAKE BUILD_DIR FAKENV FAKECUDA_DIR}
build=${2:?} fakenv=${3:?} fakecuda=${4:?}
installed_summary=""
. "$(dirname "$0")/installed.sh" # check_installed sets installed_summary
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$cmake" --install "$build" --prefix "$t/P" >"$t/install.log" 2>&1 || {
	echo "FAIL: cmake --install: $(tail -3 "$t/install.log")"
	exit 1
}
check_installed "$t/P" "$fakenv" "$fakecuda" "$t/work"
r=$?
[ $r -eq 0 ] && echo "ok: cmake --install: $(find "$t/P" -type f | wc -l) files; $installed_summary"
exit $r
