#!/usr/bin/env bash
# lint_cppcheck: cppcheck over shim/, common/ and tracer/, clean or fail.  The checks
# (warning, style, performance, portability) and the suppressions are in
# this directory; each suppression says why.  Skips with 77 without cppcheck.
#   cppcheck.sh SOURCE_DIR GEN_DIR
set -u
src=$1 gen=$2
command -v cppcheck > /dev/null || { echo "cppcheck not installed"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cd "$src" || exit 2
# the suppressions file carries a comment per entry; cppcheck's own parser does not
supp=()
while read -r id _; do
	case $id in ''|'#'*) ;; *) supp+=("--suppress=$id") ;; esac
done < tests/lint/cppcheck-suppressions.txt
# _Noreturn: cppcheck 2.x does not know it, and then misreads ct_die() callers
cppcheck -q --std=c11 --enable=warning,style,performance,portability --inline-suppr \
	"${supp[@]}" \
	-D__linux__ -D__x86_64__ -D__GNUC__=12 '-D_Noreturn=__attribute__((noreturn))' \
	-DCUTRACE_VERSION='"0.1.0"' -I shim/include -I shim -I common $(for d in tracer/*/; do printf -- '-I %s ' "${d%/}"; done) -I "$gen" \
	-j "$(nproc 2>/dev/null || echo 2)" --error-exitcode=1 \
	--template='{file}:{line}: {severity} [{id}] {message}' shim common tracer 2> "$out"
rc=$?
grep -v '^ \|^$\|^\^' "$out"
echo "cppcheck: exit $rc, $(grep -c ': \(error\|warning\|style\|performance\|portability\) \[' "$out") finding(s)"
exit $rc
