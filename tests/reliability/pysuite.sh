#!/usr/bin/env bash
# rel_python_suite (labels reliability, long): CPython's own regression tests
# (Debian's libpython3.11-testsuite) with and without the shim preloaded:
# every test case must end the same way (passed, failed, error, skipped).
# The modules chosen exercise what the shim interposes or could disturb:
# files and fds, signals and sigaction, fork/subprocess/threads, mmap,
# ctypes and dlopen, ptys, select.  Skipped with one line when the package
# is not installed (scripts/setup.sh installs it where it can).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
PY=${CUTRACE_PYSUITE_PYTHON:-/usr/bin/python3.11}
LIB=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])' 2> /dev/null)
if [ ! -x "$PY" ] || [ ! -f "$LIB/test/test_os.py" ]; then
	echo "skip: the CPython test suite is not installed (apt-get install libpython3.11-testsuite)"
	exit 77
fi
MODS=(${CUTRACE_PYSUITE_MODULES:-test_os test_posix test_fcntl test_signal test_mmap test_fork1 test_wait4
	test_threading test_select test_pty test_tempfile test_shutil test_ctypes test_json test_subprocess})

# suite NAME [VAR=VALUE...]: the modules (2 workers) with per-test results in $T/NAME.xml
suite() {
	local name=$1
	shift
	mkdir -p "$T/$name.tmp"
	(cd "$T/$name.tmp" && env "$@" TMPDIR="$T/$name.tmp" timeout 280 "$PY" -m test -j2 --timeout 200 \
		--junit-xml "$T/$name.xml" "${MODS[@]}" > "$T/$name.log" 2>&1)
	echo $? > "$T/$name.rc"
}
results() { # per-test outcomes of a junit file, sorted
	"$PY" - "$1" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
out = []
for tc in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    st = "passed"
    for k in ("failure", "error", "skipped"):
        if tc.find(k) is not None:
            st = k
    out.append("%s.%s %s" % (tc.get("classname", ""), tc.get("name", ""), st))
print("\n".join(sorted(out)))
PYEOF
}

mkdir -m 700 "$T/traces"
t0=$(date +%s)
suite ref
t1=$(date +%s)
suite shim LD_PRELOAD="$SHIM" CUTRACE_DIR="$T/traces"
t2=$(date +%s)
if [ ! -s "$T/ref.xml" ]; then
	bad "the suite without the shim left no results (exit $(cat "$T/ref.rc")): $(tail -3 "$T/ref.log" | tr '\n' '|')"
	finish
fi
if [ ! -s "$T/shim.xml" ]; then
	bad "the suite with the shim left no results (exit $(cat "$T/shim.rc")): $(tail -3 "$T/shim.log" | tr '\n' '|')"
	finish
fi
results "$T/ref.xml" > "$T/ref.res"
results "$T/shim.xml" > "$T/shim.res"
n=$(wc -l < "$T/ref.res")
summary=$(awk '{print $2}' "$T/ref.res" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')
if cmp -s "$T/ref.res" "$T/shim.res"; then
	ok "${#MODS[@]} modules, $n test cases, identical per-test results with the shim (${summary%, }; $((t1 - t0)) s without, $((t2 - t1)) s with)"
else
	bad "per-test results differ: $(diff "$T/ref.res" "$T/shim.res" | grep '^[<>]' | head -6 | tr '\n' '|')"
fi
[ "$(cat "$T/ref.rc")" = "$(cat "$T/shim.rc")" ] && ok "same exit status of the suite ($(cat "$T/ref.rc"))" ||
	bad "suite exit status $(cat "$T/ref.rc") without the shim, $(cat "$T/shim.rc") with it"
[ -z "$(ls -A "$T/traces")" ] && ok "no trace file (nothing touched CUDA)" ||
	bad "trace files appeared: $(ls "$T/traces" | head -3 | tr '\n' ' ')"
finish
