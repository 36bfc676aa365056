#!/usr/bin/env bash
# The one-file cutrace on a GPU machine: copied alone into an empty
# directory, it must run `cutrace probe` and
# `cutrace run -- python3 -c 'import torch; torch.zeros(1, device="cuda")'`
# with a healthy verdict, and `cutrace doctor`, from the shim and probe it
# carries (nothing of the build tree is used).
#
#   scripts/gpu-onefile.sh ONEFILE [OUTDIR]
#
# ONEFILE is build/onefile/cutrace as built on the development machine
# (scripts/setup.sh); the GPU machine needs no libelf, no Check, no build.
# OUTDIR (default $OUT) gets gpu-onefile.md (the results), the outputs of
# each command (*.out) and the traces (traces.tar.gz).  Exit status 0 when
# probe and the torch run both end with an OK verdict.
set -uo pipefail
src=${1:?usage: gpu-onefile.sh ONEFILE [OUTDIR]}
out=${2:-${OUT:-}}
[ -n "$out" ] || { echo "gpu-onefile: give OUTDIR (or set OUT)" >&2; exit 2; }
[ -f "$src" ] || { echo "gpu-onefile: $src: no such file (build it with scripts/setup.sh)" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
alone=$(mktemp -d "${TMPDIR:-/tmp}/cutrace-onefile.XXXXXX")
traces=$(mktemp -d "${TMPDIR:-/tmp}/cutrace-onefile-traces.XXXXXX")
trap 'rm -rf "$alone" "$traces"' EXIT
cp "$src" "$alone/cutrace" && chmod 755 "$alone/cutrace"
c=$alone/cutrace
md=$out/gpu-onefile.md
fail=0

step() { # name expected-status command...: run it from the empty directory
	local name=$1 want=$2 r t0 t1
	shift 2
	t0=$(date +%s%N)
	(cd "$alone" && "$@") >"$out/$name.out" 2>&1
	r=$?
	t1=$(date +%s%N)
	printf '| %s | `%s` | %s | %d ms |\n' "$name" "$(echo "$*" | sed "s|$alone/||g; s|$traces|TRACES|g")" \
		"$r" $(((t1 - t0) / 1000000)) >>"$md"
	if [ -n "$want" ] && [ "$r" != "$want" ]; then
		echo "gpu-onefile: $name exited $r, expected $want" >&2
		fail=1
	fi
	return 0
}
verdict() { # name pattern: the verdict line must be there
	if grep -q -- "$2" "$out/$1.out"; then
		echo "- $1: \`$(grep -m1 -- "$2" "$out/$1.out" | sed 's/^ *//')\`" >>"$md"
	else
		echo "- $1: **no '$2'**: \`$(grep -m1 -i 'verdict\|FAILED' "$out/$1.out")\`" >>"$md"
		fail=1
	fi
}

{
	echo "# the one-file cutrace on $(hostname)"
	echo
	echo "- file: $(stat -c %s "$c") bytes, sha256 $(sha256sum "$c" | cut -c1-16), alone in $alone"
	echo "- $(uname -srm); glibc $(getconf GNU_LIBC_VERSION 2>/dev/null | cut -d' ' -f2)"
	echo "- driver: $(head -1 /proc/driver/nvidia/version 2>/dev/null || echo 'no /proc/driver/nvidia/version')"
	echo "- interpreter: $(readelf -lW "$c" 2>/dev/null | grep -c 'Requesting program interpreter') (0: static)"
	echo "- torch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1)"
	echo
	echo "| step | command | exit | wall |"
	echo "|---|---|---|---|"
} >"$md"

step version 0 "$c" --version
step probe 0 "$c" probe --color=never --size 2M -o "$traces/probe"
step probe_ctx_nvml 0 "$c" probe --color=never --size 2M --ctx --nvml -o "$traces/probe-ctx"
step torch 0 "$c" run --size 2M -o "$traces/torch" -- python3 -c 'import torch; torch.zeros(1, device="cuda"); print("torch ok", torch.cuda.get_device_name(0))'
step show "" "$c" show --color=never --no-time "$traces/torch"
step doctor "" env CUTRACE_DIR="$traces/doctor" "$c" doctor --color=never
echo >>"$md"
verdict probe ': OK CUDA initialized'
verdict probe_ctx_nvml ': OK CUDA initialized'
verdict torch ': OK CUDA initialized'
verdict show '^  verdict  OK'
verdict doctor '^verdict:'
grep -q 'probe skipped\|could not trace' "$out/doctor.out" && { echo "- doctor: its probe did not run" >>"$md"; fail=1; }
echo "- shim used by the torch run: \`$(ls "$traces/torch/.cutrace" 2>/dev/null | tr '\n' ' ')\` in the trace directory" >>"$md"
(cd "$traces" && tar --exclude=.cutrace -czf "$out/traces.tar.gz" .) 2>/dev/null
echo >>"$md"
[ $fail -eq 0 ] && echo "**result: healthy** (probe and torch OK from the one file alone)" >>"$md" ||
	echo "**result: FAILED** (see the .out files)" >>"$md"
cat "$md"
exit $fail
