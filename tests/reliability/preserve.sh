#!/usr/bin/env bash
# rel_preserve: behaviour preservation.  Each program of the battery runs
# twice in the same fresh working directory: without the shim, then with
# LD_PRELOAD=libcutrace.so (in front of the rig's fake kernel for the CUDA
# programs).  stdout, stderr and the exit status must be identical.  The
# shim must also have traced the programs that touch the (fake) driver, and
# left no trace for those that do not.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
W=$T/w
traces=$T/traces
mkdir -p "$traces"
export GIT_AUTHOR_DATE="2020-01-01T00:00:00Z" GIT_COMMITTER_DATE="2020-01-01T00:00:00Z"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com LC_ALL=C TZ=UTC

# same NAME KIND SNIPPET: KIND is plain (no driver: expect no trace), rig
# (fake NVIDIA stack: expect at least one trace), rig0 (fake stack, no call
# the shim records: no trace) or any (a trace or not).  SNIPPET runs in bash in $W.
same() {
	local name=$1 kind=$2 snippet=$3 base="" envs=() before after
	if [ "$kind" = rig ] || [ "$kind" = rig0 ]; then
		base=$RIG_PRELOAD
		envs=(LD_LIBRARY_PATH="$FAKECUDA_DIR")
	fi
	rm -rf "$W" && mkdir -p "$W"
	(cd "$W" && HOME=$W run3 "$T/a" env "${envs[@]}" LD_PRELOAD="$base" bash -c "$snippet")
	rm -rf "$W" && mkdir -p "$W"
	before=$(ls "$traces" | wc -l)
	(cd "$W" && HOME=$W run3 "$T/b" env "${envs[@]}" CUTRACE_DIR="$traces" \
		LD_PRELOAD="$SHIM${base:+ $base}" bash -c "$snippet")
	after=$(ls "$traces" | wc -l)
	compare_runs "$name" "$T/a" "$T/b" 0 || return
	if [ "$kind" = rig ] && [ "$after" -le "$before" ]; then
		bad "$name: the shim wrote no trace"
	elif { [ "$kind" = plain ] || [ "$kind" = rig0 ]; } && [ "$after" -ne "$before" ]; then
		bad "$name: a program that never touches the driver left a trace"
	fi
}

# ---- coreutils and the shell ---------------------------------------------------
same "ls -l"                 plain 'ls -l /etc/passwd /bin/sh /usr/bin | head -30'
same "cat + sort + uniq"     plain 'cat /etc/passwd /etc/group | sort | uniq -c | sort -rn | head'
same "wc"                    plain 'wc -lwc /etc/services /etc/passwd'
same "sha256sum"             plain 'sha256sum /bin/ls /etc/passwd'
same "seq | tail"            plain 'seq 1 200000 | tail -3'
same "tr | fold"             plain 'printf "%s\n" hello world | tr a-z A-Z | fold -w 3'
same "find | sort"           plain 'find /usr/share/doc -maxdepth 1 | sort | head -20'
same "tar | tar"             plain 'tar -cf - -C /etc passwd group 2>/dev/null | tar -tf -'
same "gzip | gunzip"         plain 'gzip -c /etc/services | gunzip | md5sum'
same "dd"                    plain 'dd if=/dev/zero bs=1k count=256 status=none | wc -c'
same "stat"                  plain 'stat -c "%n %s %a %F" /etc/passwd /dev/null /tmp'
same "date -d"               plain 'date -u -d @86400'
same "ls missing (exit 2)"   plain 'ls /nonexistent-path'
same "false (exit 1)"        plain 'false'
same "sh exit 42"            plain 'sh -c "echo out; echo err >&2; exit 42"'
same "subshells + pipes"     plain 'for i in 1 2 3; do (echo $i; sleep 0.01) | cat; done; wait'
same "env | grep"            plain 'env | grep -c "^PATH="'
same "xargs"                 plain 'seq 1 50 | xargs -n 7 echo'
same "cat /dev/nvidiactl"    rig  'cat /dev/nvidiactl; echo "rc=$?"'
same "ls -l /dev/nvidiactl"  rig0 'ls -l /dev/nvidiactl | cut -d" " -f1,5,6'
# ---- python ----------------------------------------------------------------------------
if [ -n "${PYTHON3:-}" ]; then
	same "python json"       plain "$PYTHON3"' -c "import json,sys; print(json.dumps({\"a\": [1, 2, 3]}, sort_keys=True)); sys.exit(3)"'
	same "python threads"    plain "$PYTHON3"' -c "
import threading
out = [0] * 8
def w(i):
    out[i] = sum(range(i * 10000))
ts = [threading.Thread(target=w, args=(i,)) for i in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print(out)"'
	same "python subprocess" plain "$PYTHON3"' -c "import subprocess; print(subprocess.run([\"echo\", \"hi\"], capture_output=True).stdout)"'
	same "python ctypes libc" plain "$PYTHON3"' -c "import ctypes, os; print(ctypes.CDLL(None).getpid() == os.getpid())"'
	same "python exception"  plain "$PYTHON3"' -c "raise SystemExit(\"boom\")"'
	same "python traceback"  plain "$PYTHON3"' -c "1/0"'
	[ -n "${CTYPES_PROBE:-}" ] && same "python ctypes libcuda" rig "$PYTHON3 $CTYPES_PROBE"
	same "python open nvidiactl" rig "$PYTHON3"' -c "import os; fd = os.open(\"/dev/nvidiactl\", os.O_RDWR); print(fd > 2); os.close(fd)"'
fi
# ---- git ---------------------------------------------------------------------------------
if command -v git > /dev/null; then
	same "git --version"     plain 'git --version'
	same "git init/commit/log" plain 'git init -q r && cd r && echo x > f && git add f &&
		git commit -q -m first && echo y >> f && git commit -qam second &&
		git log --format="%H %s" && git status --short && git cat-file -p HEAD^{tree}'
	same "git error"         plain 'git -C /nonexistent status'
fi
# ---- C programs ---------------------------------------------------------------------
same "multi-threaded C (rel_mt)"   rig  "$REL_BIN/rel_mt"
same "closes every fd (rel_closefds)" rig "$REL_BIN/rel_closefds \$PWD/out; echo rc=\$?; cat out"
same "double-fork daemon (rel_daemon)" rig "$REL_BIN/rel_daemon \$PWD/daemon.txt"
same "cutrace-probe"               rig  "$PROBE --ctx --nvml"
same "cutrace-probe, no driver"    any "LD_LIBRARY_PATH= $PROBE"
for p in probe_linked fork_probe prog_ctor rt_shared rt_static; do
	[ -x "$PROG_DIR/$p" ] || continue
	case $p in
	probe_linked) same "$p --ctx --mem" rig "$PROG_DIR/$p --ctx --mem" ;;
	fork_probe) same "$p" rig "$PROG_DIR/$p"
		same "$p --exec probe" rig "$PROG_DIR/$p --exec $PROBE" ;;
	*) same "$p" rig "$PROG_DIR/$p" ;;
	esac
done

# ---- errno after every hooked call ------------------------------------------------------
rm -rf "$W" && mkdir -p "$W" "$T/et"
run3 "$T/ea" env LD_LIBRARY_PATH="$FAKECUDA_DIR" LD_PRELOAD="$RIG_PRELOAD" "$REL_BIN/rel_errno" "$W"
rm -rf "$W" && mkdir -p "$W"
run3 "$T/eb" env LD_LIBRARY_PATH="$FAKECUDA_DIR" CUTRACE_DIR="$T/et" LD_PRELOAD="$SHIM_PRELOAD" \
	"$REL_BIN/rel_errno" "$W"
compare_runs "errno and results after every hooked call (rel_errno, $(wc -l < "$T/ea.out") lines)" "$T/ea" "$T/eb"
if ! ls "$T/et"/*.cutrace > /dev/null 2>&1; then
	bad "rel_errno: no trace written"
fi
finish
