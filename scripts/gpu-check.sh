#!/usr/bin/env bash
# doctor --check and --format=prometheus on a healthy GPU machine (issue 20):
# the one line and exit 0, the metrics (cutrace_cuda_init_ok 1, the probe's
# cuInit seconds, one cutrace_gpu_info per GPU with dcgm-exporter's labels),
# a check with /dev/nvidia-uvm denied by a rule (exit 1, [device-node]),
# and show --summary / --format=prometheus over a 4-rank job.  Under 1 min.
#
#   scripts/gpu-check.sh -c PATH_TO_CUTRACE -o OUTDIR
#
# PATH_TO_CUTRACE: build/onefile/cutrace.  OUTDIR gets gpu-check.md (the
# results) and every output (*.out, *.prom).  Missing tools (promtool,
# nvidia-smi) are noted, never fatal.
set -uo pipefail
c="" out=""
while getopts "c:o:h" o; do
	case $o in
	c) c=$OPTARG ;;
	o) out=$OPTARG ;;
	*) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
[ -n "$c" ] && [ -n "$out" ] || { echo "usage: gpu-check.sh -c PATH_TO_CUTRACE -o OUTDIR" >&2; exit 2; }
[ -x "$c" ] || { echo "gpu-check: $c is not executable" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
md=$out/gpu-check.md
work=$(mktemp -d "${TMPDIR:-/tmp}/cutrace-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
export CUTRACE_DIR=$work/traces

step() { # name command...: run, record exit status and time
	local name=$1 r t0 t1
	shift
	t0=$(date +%s%N)
	"$@" >"$out/$name.out" 2>"$out/$name.err"
	r=$?
	t1=$(date +%s%N)
	printf '| %s | `%s` | %s | %d ms |\n' "$name" "$*" "$r" $(((t1 - t0) / 1000000)) >>"$md"
	return $r
}

{
	echo "# cutrace doctor --check / --format=prometheus on $(hostname) ($(date -u +%FT%TZ))"
	echo
	echo "driver: $(head -1 /proc/driver/nvidia/version 2>/dev/null || echo '?')"
	command -v nvidia-smi >/dev/null && echo "GPUs: $(nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv,noheader 2>/dev/null | tr '\n' ';')"
	echo
	echo "| step | command | exit | time |"
	echo "|---|---|---|---|"
} >"$md"

step check "$c" doctor --check
step check_timeout5s "$c" doctor --check --timeout 5s
step prom "$c" doctor --format=prometheus
cp "$out/prom.out" "$out/doctor.prom"
step check_uvm_denied env CUTRACE_INJECT='open:path=/dev/nvidia-uvm:error=EPERM' "$c" doctor --check
# a 4-rank job, rank 2 denied /dev/nvidia-uvm
mkdir -p "$work/job"
for r in 0 1 2 3; do
	RANK=$r CUTRACE_INJECT='open:path=/dev/nvidia-uvm:error=EPERM:rank=2' "$c" probe -q -o "$work/job/rank$r" \
		>/dev/null 2>&1
done
step job_summary "$c" show --summary "$work/job"
step job_prom "$c" show --format=prometheus "$work/job"
cp "$out/job_prom.out" "$out/job.prom"
if command -v promtool >/dev/null; then
	step promtool_doctor promtool check metrics <"$out/doctor.prom"
	step promtool_job promtool check metrics <"$out/job.prom"
else
	echo "promtool: not installed, exposition not checked here" >>"$md"
fi
{
	echo
	for f in check check_timeout5s check_uvm_denied job_summary; do
		echo "## $f"
		echo '```'
		cat "$out/$f.out"
		echo '```'
	done
	echo "## doctor --format=prometheus (samples)"
	echo '```'
	grep -v '^#' "$out/doctor.prom"
	echo '```'
	echo "## show --format=prometheus (samples)"
	echo '```'
	grep -v '^#' "$out/job.prom"
	echo '```'
} >>"$md"
cat "$md"
