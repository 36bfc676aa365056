#!/usr/bin/env bash
# rel_hostile: hostile environments.  The program (cutrace-probe on the rig,
# or a rel_* program) must run exactly as it would without the shim: same
# stdout, same exit status, same stderr apart from at most ONE line from the
# shim.  Where the shim cannot trace, no file may be left behind; where it
# can, the trace must be readable.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
RIG_ENV=(LD_LIBRARY_PATH="$FAKECUDA_DIR")
PROG=("$PROBE" --ctx --nvml)

ref() { # the program without the shim -> $T/ref.*
	run3 "$T/ref" env "${RIG_ENV[@]}" LD_PRELOAD="$RIG_PRELOAD" "$@"
}

# h NAME EXPECT DIR [VAR=VALUE...] [-- WRAPPER...]: the program with the shim,
# its trace directory DIR; EXPECT: trace (a readable trace in DIR), none (no
# file in DIR), any.  A WRAPPER (e.g. bash -c 'ulimit -f 100; exec "$@"' x)
# runs the program.
h() {
	local name=$1 expect=$2 dir=$3 envs=() wrap=() f
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ "${1:-}" = -- ] && { shift; wrap=("$@"); }
	[ -n "$dir" ] && [ -d "$dir" ] && find "$dir" -maxdepth 1 -name '*.cutrace' -delete 2>/dev/null
	run3 "$T/h" "${wrap[@]}" env "${RIG_ENV[@]}" CUTRACE_DIR="$dir" "${envs[@]}" \
		LD_PRELOAD="$SHIM_PRELOAD" "${PROG[@]}"
	compare_runs "$name" "$T/ref" "$T/h" 1 || return
	case $expect in
	trace)
		if ! f=$(one_trace "$dir"); then
			bad "$name: no trace in $dir"
		elif ! "$CUTRACE" show "$f" > /dev/null 2>&1 && [ $? -gt 1 ]; then
			bad "$name: the trace is unreadable"
		fi ;;
	none)
		if [ -d "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null | grep -vE '^(keep|\.warned-(disabled|inject)-[0-9]+-[0-9]+)$')" ]; then
			# .warned-KEY-ROOT-START: the shim's once-per-tree warning marker
			bad "$name: files left in $dir: $(ls -A "$dir" | head -3 | tr '\n' ' ')"
		fi ;;
	esac
}

ref "${PROG[@]}"
[ "$(cat "$T/ref.rc")" = 0 ] || { bad "reference run of the probe failed: $(head -3 "$T/ref.err")"; finish; }

# ---- the trace directory -----------------------------------------------------------
h "missing directory (created 0700)" trace "$T/new"
[ "$(stat -c %a "$T/new" 2>/dev/null)" = 700 ] && ok "  created directory is 0700" || bad "  created directory mode $(stat -c %a "$T/new" 2>/dev/null)"
h "missing parent directory" none "$T/nope/sub"
[ -e "$T/nope" ] && bad "  the shim created $T/nope"
: > "$T/afile"
h "a regular file as the directory" none "$T/afile"
h "a path through a regular file" none "$T/afile/sub"
h "/proc as the directory" none /proc/cutrace-test
h "/dev/null as the directory" none /dev/null
mkdir -m 0755 "$T/other"
if [ "$(id -u)" = 0 ]; then
	chown 65534:65534 "$T/other"
	h "a directory owned by another user" none "$T/other"
	chown 0:0 "$T/other"
	# not writable: only as a user the permission bits apply to
	if command -v setpriv > /dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2> /dev/null &&
		setpriv --reuid=65534 --regid=65534 --clear-groups test -x "${PROG[0]}"; then
		chmod 0755 "$T"
		saved=("${PROG[@]}")
		ref setpriv --reuid=65534 --regid=65534 --clear-groups "${PROG[@]}"
		PROG=(setpriv --reuid=65534 --regid=65534 --clear-groups "${PROG[@]}")
		h "an unwritable directory (root's 0755, as nobody)" none "$T/other"
		PROG=("${saved[@]}")
		chmod 0700 "$T"
		ref "${PROG[@]}"
	else
		skip "unwritable directory: cannot run the probe as nobody here"
	fi
else
	chmod 0555 "$T/other"
	h "an unwritable directory (0555)" none "$T/other"
	chmod 0755 "$T/other"
fi

# ---- disk full and file size limits ------------------------------------------------
if unshare -m true 2> /dev/null; then
	mkdir -p "$T/tiny" "$T/small"
	h "full disk (tmpfs of 200K)" none "$T/tiny" -- \
		unshare -m bash -c 'mount -t tmpfs -o size=200k tmpfs "$0" && exec "$@"' "$T/tiny"
	h "almost full disk (tmpfs of 600K: trace halved)" any "$T/small" -- \
		unshare -m bash -c 'mount -t tmpfs -o size=600k tmpfs "$0" && "$@"; rc=$?; ls -l "$0"/*.cutrace > "$0.ls" 2>&1; exit $rc' "$T/small"
	grep -q cutrace "$T/small.ls" && ok "  a trace of $(awk '{print $5}' "$T/small.ls") bytes fit" ||
		bad "  no trace in the 600K tmpfs: $(cat "$T/small.ls")"
else
	skip "full disk: unshare -m (a private mount namespace) is not allowed here"
fi
h "ulimit -f 100 (below the smallest trace)" none "$T/f100" -- bash -c 'ulimit -f 100; exec "$@"' x
h "ulimit -f 1000 (trace shrunk to fit)" trace "$T/f1000" -- bash -c 'ulimit -f 1000; exec "$@"' x
f=$(one_trace "$T/f1000") && [ "$(stat -c %s "$f")" -le 1024000 ] && ok "  trace is $(stat -c %s "$f") bytes <= the limit" ||
	bad "  trace size $(stat -c %s "$f" 2>/dev/null) above ulimit -f"

# ---- CUTRACE_* garbage --------------------------------------------------------------
for v in abc -1 0 1e9 12Q 99999999999999999999999 18446744073709551615 '' ' 16M' 16MB 3G; do
	h "CUTRACE_SIZE='$v'" trace "$T/size" CUTRACE_SIZE="$v"
done
for v in abc -3 99999999999999 ''; do
	h "CUTRACE_DEBUG='$v'" trace "$T/dbg" CUTRACE_DEBUG="$v"
done
for v in '%%%' 'ioctl:error=' 'open:path=/dev/nvidiactl:error=ENOSUCH' \
	"$(head -c 20000 /dev/zero | tr '\0' 'x')" 'cuInit:retval=100:when=5..2'; do
	h "CUTRACE_INJECT garbage ($(printf %s "$v" | cut -c1-24))" trace "$T/inj" CUTRACE_INJECT="$v"
done
h "CUTRACE_DISABLE=1" none "$T/dis" CUTRACE_DISABLE=1
h "CUTRACE_DISABLE=0" trace "$T/dis0" CUTRACE_DISABLE=0
h "unknown CUTRACE_FOO" trace "$T/foo" CUTRACE_FOO=bar CUTRACE_=x
h "CUTRACE_DIR with a newline" any "$T/a
b"

# ---- loader patterns ------------------------------------------------------------------
stub=${STUBCUDA_DIR:+$STUBCUDA_DIR/libcuda.so.1}
[ -e "$stub" ] || stub=""
PROG=("$REL_BIN/rel_dlcycle" $stub)
ref "${PROG[@]}"
h "dlclose + re-dlopen of libcuda, RTLD_DEEPBIND, two libcudas, RTLD_DEFAULT" trace "$T/dl"
f=$(one_trace "$T/dl") && n=$("$CUTRACE" show --json "$f" 2>/dev/null | grep -c '"call":"cuInit"') &&
	[ "$n" -ge 9 ] && ok "  $n cuInit calls traced across the reloads" || bad "  cuInit calls traced: ${n:-none}"

# ---- ioctl blocks in memory that is gone ----------------------------------------------
PROG=("$REL_BIN/rel_stale")
ref "${PROG[@]}"
h "ioctl block in memory unmapped / PROT_NONE after a first call" trace "$T/stale"

# ---- seccomp ----------------------------------------------------------------------------
PROG=("$PROBE" --ctx --nvml)
for m in vmread fallocate excl-open mmap-shared gettid; do
	run3 "$T/ref" env "${RIG_ENV[@]}" LD_PRELOAD="$RIG_PRELOAD" "$REL_BIN/rel_seccomp" $m "${PROG[@]}"
	if [ "$(cat "$T/ref.rc")" = 77 ]; then
		skip "seccomp $m: $(head -1 "$T/ref.err")"
		continue
	fi
	want=any
	case $m in fallocate|excl-open|mmap-shared) want=none ;; esac
	h "seccomp: $m denied (EPERM)" $want "$T/sc-$m" -- "$REL_BIN/rel_seccomp" $m
done
finish
