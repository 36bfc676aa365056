#!/usr/bin/env bash
# rel_dirs: the trace directory cannot be redirected or taken over.  The
# shim opens it component by component (O_PATH|O_DIRECTORY|O_NOFOLLOW,
# checked through the fd): a symbolic link planted in a sticky
# world-writable directory is refused, as is a path through a directory of
# another user (who could rename what lies below), also for root; a refusal
# is one warning and the program runs unharmed.  `cutrace run` judges the
# base directory the same way (exit 2).  Cases as root and, through setpriv,
# as nobody.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
RIG_ENV=(LD_LIBRARY_PATH="$FAKECUDA_DIR")
[ "$(id -u)" = 0 ] || { echo "skip: needs root (plants files as another user)"; exit 77; }
W=$(mktemp -d /tmp/cutrace-dirs.XXXXXX)
chmod 755 "$W"
trap 'rm -rf "$T" "$W"' EXIT
AS_NOBODY=()
if command -v setpriv > /dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$SHIM" 2> /dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$PROBE" 2> /dev/null; then
	AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi

# d WHO NAME EXPECT DIR [CHECKDIR]: the probe with CUTRACE_DIR=DIR as WHO
# (root or nobody); EXPECT trace|none in CHECKDIR (default DIR)
d() {
	local who=$1 name=$2 expect=$3 dir=$4 check=${5:-$4} pre=()
	[ "$who" = nobody ] && pre=("${AS_NOBODY[@]}")
	run3 "$W/ref" "${pre[@]}" env "${RIG_ENV[@]}" LD_PRELOAD="$RIG_PRELOAD" "$PROBE" --ctx
	run3 "$W/sh" "${pre[@]}" env "${RIG_ENV[@]}" CUTRACE_DIR="$dir" LD_PRELOAD="$SHIM_PRELOAD" "$PROBE" --ctx
	compare_runs "$who: $name" "$W/ref" "$W/sh" 1 || return
	local n
	n=$(find "$check" -maxdepth 1 -name '*.cutrace' 2> /dev/null | wc -l)
	case $expect in
	trace) [ "$n" = 1 ] && ok "  traced into $check" || bad "  $n traces in $check, 1 expected" ;;
	none)
		[ "$n" = 0 ] || bad "  $n trace(s) written into $check"
		[ "$(shim_lines "$W/sh.err")" = 1 ] && ok "  refused with one warning: $(grep -m1 '^cutrace\[' "$W/sh.err" | cut -c1-150)" ||
			bad "  refused without a warning"
		;;
	esac
}

mkdir -m 1777 "$W/sticky"
mkdir -m 700 "$W/victim"
# a symlink another user planted in a sticky world-writable directory
ln -s "$W/victim" "$W/sticky/cutrace-0" && chown -h 65534:65534 "$W/sticky/cutrace-0"
d root "symlink planted in a sticky world-writable dir" none "$W/sticky/cutrace-0" "$W/victim"
# the same link, planted by root itself: still in a directory others write to
ln -s "$W/victim" "$W/sticky/rootlink"
d root "symlink (root's own) in a sticky world-writable dir" none "$W/sticky/rootlink" "$W/victim"
# a symlink in a directory only root writes to (/var/run -> /run): followed
mkdir -m 755 "$W/safe" && mkdir -m 700 "$W/real" && ln -s "$W/real" "$W/safe/link"
d root "symlink in a root-only directory" trace "$W/safe/link" "$W/real"
# a directory of root's under another user's directory
mkdir -m 755 "$W/alice" && chown 65534:65534 "$W/alice" && mkdir -m 700 "$W/alice/traces"
d root "root's directory under another user's" none "$W/alice/traces"
# another user's directory as the directory
mkdir -m 700 "$W/bobdir" && chown 65534:65534 "$W/bobdir"
d root "another user's directory" none "$W/bobdir"
# the sticky directory itself with a fresh name: created 0700, traced
d root "a new directory in a sticky world-writable dir" trace "$W/sticky/fresh"

# cutrace run (as root) judges the base directory the same way
for base in "$W/sticky/cutrace-0" "$W/alice/traces" "$W/bobdir"; do
	CUTRACE_DIR="$base" "$CUTRACE" run -- true > "$W/run.out" 2> "$W/run.err"
	rc=$?
	if [ $rc = 2 ] && [ -z "$(ls -A "$W/victim")" ] && ! ls "$base"/run-* > /dev/null 2>&1; then
		ok "root: cutrace run with base $(basename "$(dirname "$base")")/$(basename "$base"): refused, exit 2: $(head -1 "$W/run.err" | cut -c1-140)"
	else
		bad "root: cutrace run with base $base: exit $rc, $(head -c 200 "$W/run.err")"
	fi
	rm -rf "$W/victim"/* "$W/alice/traces"/* 2> /dev/null
done
"$CUTRACE" run -o "$W/sticky/cutrace-0" -- true > "$W/run.out" 2> "$W/run.err"
rc=$?
[ $rc = 2 ] && [ -z "$(ls -A "$W/victim")" ] && ok "root: cutrace run -o <planted symlink>: refused, exit 2" ||
	bad "root: cutrace run -o <planted symlink>: exit $rc, $(head -c 200 "$W/run.err")"

# ---- as nobody -----------------------------------------------------------------------
if [ ${#AS_NOBODY[@]} -eq 0 ]; then
	skip "as nobody: setpriv missing, or the shim/probe not readable by nobody"
else
	mkdir -m 700 "$W/nvictim" && chown 65534:65534 "$W/nvictim"
	ln -s "$W/nvictim" "$W/sticky/cutrace-65534"
	d nobody "symlink planted by another user in a sticky dir" none "$W/sticky/cutrace-65534" "$W/nvictim"
	mkdir -m 700 "$W/sticky/own" && chown 65534:65534 "$W/sticky/own"
	d nobody "its own directory in a sticky dir" trace "$W/sticky/own"
	mkdir -m 1777 "$W/sticky/other" && mkdir -m 777 "$W/sticky/other/x" && chmod 1777 "$W/sticky/other/x"
	d nobody "root's sticky directory in a path" trace "$W/sticky/other/x/n" "$W/sticky/other/x/n"
	CUTRACE_DIR="$W/sticky/cutrace-65534" "${AS_NOBODY[@]}" "$CUTRACE" run -- true > "$W/run.out" 2> "$W/run.err"
	rc=$?
	[ $rc = 2 ] && [ -z "$(ls -A "$W/nvictim")" ] && ok "nobody: cutrace run with a planted symlink as base: refused, exit 2" ||
		bad "nobody: cutrace run with a planted symlink as base: exit $rc, $(head -c 200 "$W/run.err")"
fi
finish
