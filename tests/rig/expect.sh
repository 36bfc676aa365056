#!/usr/bin/env bash
# expect.sh: run one test program in an explicit environment and check what
# it printed.  Used by the rig self-tests; integration tests may reuse it.
#
# usage: expect.sh [-x STATUS] [-s] [-e LINE]... [-n LINE]... [VAR=VALUE]... -- COMMAND [ARGS...]
#   -x STATUS   the exit status COMMAND must return
#   -e LINE     a line that must appear on COMMAND's stdout (whole-line match)
#   -n LINE     a line that must not appear
#   -s          stderr must be empty
#   VAR=VALUE   environment for COMMAND only.  LD_PRELOAD, LD_LIBRARY_PATH,
#               CUDA_VISIBLE_DEVICES and every FAKENV_*/FAKECUDA_*/FAKENVML_*
#               variable are removed from the inherited environment first, so
#               a test sees exactly what it names.
# On failure it prints the command's stdout and stderr and exits 1.
set -u

status=""
quiet=0
want=()
deny=()
envs=()
while [ $# -gt 0 ]; do
    case "$1" in
        -x) status=$2; shift 2 ;;
        -e) want+=("$2"); shift 2 ;;
        -n) deny+=("$2"); shift 2 ;;
        -s) quiet=1; shift ;;
        --) shift; break ;;
        *=*) envs+=("$1"); shift ;;
        *) echo "expect.sh: unexpected argument '$1' (want -x/-e/-n/VAR=VALUE then --)" >&2; exit 2 ;;
    esac
done
if [ $# -eq 0 ]; then
    echo "expect.sh: no command after --" >&2
    exit 2
fi

scrub=(-u LD_PRELOAD -u LD_LIBRARY_PATH -u CUDA_VISIBLE_DEVICES)
while IFS='=' read -r name _; do
    case "$name" in
        FAKENV_*|FAKECUDA_*|FAKENVML_*) scrub+=(-u "$name") ;;
    esac
done < <(env)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
env "${scrub[@]}" "${envs[@]}" "$@" >"$tmp/out" 2>"$tmp/err"
rc=$?

fail=0
if [ -n "$status" ] && [ "$rc" != "$status" ]; then
    echo "expect.sh: exit status $rc, wanted $status"
    fail=1
fi
for line in "${want[@]+"${want[@]}"}"; do
    if ! grep -qxF -- "$line" "$tmp/out"; then
        echo "expect.sh: missing line: $line"
        fail=1
    fi
done
for line in "${deny[@]+"${deny[@]}"}"; do
    if grep -qxF -- "$line" "$tmp/out"; then
        echo "expect.sh: unwanted line: $line"
        fail=1
    fi
done
if [ $quiet -eq 1 ] && [ -s "$tmp/err" ]; then
    echo "expect.sh: stderr is not empty"
    fail=1
fi
if [ $fail -ne 0 ]; then
    echo "---- command: ${envs[*]+"${envs[*]}"} $*"
    echo "---- stdout"
    cat "$tmp/out"
    echo "---- stderr"
    cat "$tmp/err"
    exit 1
fi
exit 0
