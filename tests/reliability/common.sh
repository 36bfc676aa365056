# Shared helpers of the reliability scripts (sourced).
#
# Environment (set by tests/reliability/tests.cmake): SHIM (libcutrace.so),
# FAKENV (libfakenv.so), FAKECUDA_DIR, CUTRACE (the CLI), REL_BIN (the
# programs of this directory), REL_CHECK, PROBE (cutrace-probe), PROG_DIR
# (tests/programs), PYTHON3.
#
# Each script prints one "ok: ..." or "FAIL: ..." line per case and ends with
# "N cases, M failed"; it exits 1 if any failed, 77 if nothing could be run.
set -u
: "${SHIM:?}" "${FAKENV:?}" "${FAKECUDA_DIR:?}" "${CUTRACE:?}" "${REL_BIN:?}" "${REL_CHECK:?}"

T=$(mktemp -d "${TMPDIR:-/tmp}/cutrace-rel.XXXXXX")
chmod 700 "$T"
trap 'rm -rf "$T"' EXIT
N_CASES=0 N_FAIL=0 N_SKIP=0

ok()   { N_CASES=$((N_CASES + 1)); echo "ok:   $*"; }
bad()  { N_CASES=$((N_CASES + 1)); N_FAIL=$((N_FAIL + 1)); echo "FAIL: $*"; }
skip() { N_SKIP=$((N_SKIP + 1)); echo "skip: $*"; }
finish() {
	echo "$N_CASES cases, $N_FAIL failed, $N_SKIP skipped"
	[ "$N_FAIL" -eq 0 ] || exit 1
	[ "$N_CASES" -gt 0 ] || exit 77
	exit 0
}

# run3 PREFIX CMD...: stdout, stderr and exit status into PREFIX.{out,err,rc}
run3() {
	local p=$1
	shift
	"$@" > "$p.out" 2> "$p.err" < /dev/null
	echo $? > "$p.rc"
}

# the fake NVIDIA stack without and with the shim (the shim goes first)
RIG_PRELOAD="$FAKENV"
SHIM_PRELOAD="$SHIM $FAKENV"

# cutrace lines on stderr: the shim's warnings start with "cutrace["
shim_lines() { grep -c '^cutrace\[' "$1" || true; }

# compare_runs NAME A B [MAX_SHIM_LINES]: same stdout and status; stderr the
# same once the shim's own lines are removed, and at most MAX (default 0) of those
compare_runs() {
	local name=$1 a=$2 b=$3 max=${4:-0} why="" n
	if ! cmp -s "$a.out" "$b.out"; then
		why="stdout differs: $(diff "$a.out" "$b.out" | head -4 | tr '\n' '|')"
	elif ! cmp -s "$a.rc" "$b.rc"; then
		why="exit status $(cat "$a.rc") without the shim, $(cat "$b.rc") with it"
	else
		grep -v '^cutrace\[' "$b.err" > "$b.err.clean" || true
		n=$(shim_lines "$b.err")
		if ! cmp -s "$a.err" "$b.err.clean"; then
			why="stderr differs: $(diff "$a.err" "$b.err.clean" | head -4 | tr '\n' '|')"
		elif [ "$n" -gt "$max" ]; then
			why="$n cutrace line(s) on stderr, at most $max allowed: $(grep '^cutrace\[' "$b.err" | head -2 | tr '\n' '|')"
		fi
	fi
	if [ -n "$why" ]; then
		bad "$name: $why"
		return 1
	fi
	ok "$name (exit $(cat "$a.rc")$( [ "$max" -gt 0 ] && [ "$n" -gt 0 ] && printf '; warning: %s' "$(grep -m1 '^cutrace\[' "$b.err" | cut -c1-120)"))"
	return 0
}

# the single trace file in DIR (fails the case when there is not exactly one)
one_trace() {
	local n
	n=$(ls "$1"/*.cutrace 2>/dev/null | wc -l)
	[ "$n" -eq 1 ] || return 1
	ls "$1"/*.cutrace
}
