# shellcheck shell=bash
# Sourced by tree.sh and deb.sh: check an installed tree under PREFIX.
# check_installed PREFIX FAKENV FAKECUDA_DIR WORKDIR: prints FAIL lines,
# returns 1 on any; sets installed_summary.
check_installed() {
	local p=$1 fakenv=$2 fakecuda=$3 w=$4 fail=0 f r
	mkdir -p "$w"
	for f in bin/cutrace lib/cutrace/libcutrace.so libexec/cutrace/cutrace-probe \
		share/man/man1/cutrace.1.gz share/doc/cutrace/README.md share/doc/cutrace/JSON.md \
		share/doc/cutrace/SCENARIOS.md share/doc/cutrace/format.h; do
		[ -f "$p/$f" ] || { echo "FAIL: $p/$f is missing"; fail=1; }
	done
	[ -e "$p/lib/libcutrace.so" ] && { echo "FAIL: a shim in $p/lib (it goes to lib/cutrace)"; fail=1; }
	[ -e "$p/bin/cutrace-probe" ] && { echo "FAIL: the probe in $p/bin (it goes to libexec/cutrace)"; fail=1; }

	# from another directory, with no option and nothing in the environment
	(cd "$w" && env -u CUTRACE_LIB LD_LIBRARY_PATH="$fakecuda" LD_PRELOAD="$fakenv" \
		"$p/bin/cutrace" probe --color=never -o "$w/p") >"$w/p.out" 2>&1
	r=$?
	[ $r -eq 0 ] || { echo "FAIL: the installed cutrace probe exited $r: $(tail -3 "$w/p.out")"; fail=1; }
	grep -q ': OK CUDA initialized' "$w/p.out" || { echo "FAIL: installed probe: no OK verdict"; fail=1; }
	grep -q "^  command  $p/bin/../libexec/cutrace/cutrace-probe" "$w/p.out" ||
		{ echo "FAIL: installed probe: not $p/libexec/cutrace/cutrace-probe: $(grep -m1 '^  command' "$w/p.out")"; fail=1; }
	(cd "$w" && env -u CUTRACE_LIB "$p/bin/cutrace" run -q -o "$w/r" -- sh -c 'echo "$LD_PRELOAD"') >"$w/r.out" 2>&1
	grep -qx "$(cd "$p/lib/cutrace" && pwd -P)/libcutrace.so" "$w/r.out" ||
		{ echo "FAIL: installed run preloads '$(head -1 "$w/r.out")', not $p/lib/cutrace/libcutrace.so"; fail=1; }
	if command -v man >/dev/null; then
		MANWIDTH=80 man -l "$p/share/man/man1/cutrace.1.gz" 2>/dev/null | grep -q '^ENVIRONMENT' ||
			{ echo "FAIL: man -l $p/share/man/man1/cutrace.1.gz shows no ENVIRONMENT section"; fail=1; }
	fi
	# shellcheck disable=SC2034  # read by the scripts that source this file
	installed_summary="probe OK from libexec/cutrace, run preloads lib/cutrace/libcutrace.so, man -l reads"
	return $fail
}
