#!/usr/bin/env bash
# Issue 19, groups 2 and 5, on a real GPU: what doctor's hardware checks
# find on a healthy machine (PCI ids named from pci.ids, the driver bound,
# module file, Secure Boot, GSP firmware, kernel log, IMEX channels), how the
# real libcuda reads CUDA_VISIBLE_DEVICES (indices, signs, trailing junk,
# repeats, full and short GPU UUIDs, MIG UUIDs on a GPU without MIG) against
# what cutrace's parser (tracer/diag/selectors.h, PyTorch's model) predicts,
# NVML's device count beside CUDA's (NVML ignores CUDA_VISIBLE_DEVICES), and
# the scenarios of issue 19 with the probe and torch.
#
#   scripts/gpu-issue19.sh [-c CUTRACE] [-o OUTDIR]
#
# CUTRACE (default build/onefile/cutrace): the one-file cutrace.  OUTDIR
# (default $OUT) gets gpu-issue19.md (the tables), gpu-issue19.log (every
# command and its output), doctor.txt, doctor.json and the traces of the
# scenario runs (traces.tar.gz).  Needs python3; torch, nvidia-smi and
# dmesg are used when present.  About 2 minutes on the H200; exit 0 when it ran.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 2
CT=build/onefile/cutrace OUTDIR=${OUT:-}
while getopts "c:o:h" o; do
	case $o in
	c) CT=$OPTARG ;;
	o) OUTDIR=$OPTARG ;;
	*) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
[ -n "$OUTDIR" ] || { echo "gpu-issue19: give -o OUTDIR (or set OUT)" >&2; exit 2; }
mkdir -p "$OUTDIR" && OUTDIR=$(cd "$OUTDIR" && pwd) || exit 2
[ -x "$CT" ] || { echo "gpu-issue19: no cutrace at $CT (-c)" >&2; exit 2; }
CT=$(cd "$(dirname "$CT")" && pwd)/$(basename "$CT")
W=$(mktemp -d "${TMPDIR:-/tmp}/cutrace-i19.XXXXXX")
trap 'rm -rf "$W"' EXIT
LOG=$OUTDIR/gpu-issue19.log MD=$OUTDIR/gpu-issue19.md
: > "$LOG"
log() { printf '%s\n' "$*" >> "$LOG"; }
run() { log "\$ $*"; "$@" >> "$LOG" 2>&1; local rc=$?; log "(exit $rc)"; return $rc; }
have() { command -v "$1" > /dev/null 2>&1; }
HAVE_TORCH=0
python3 -c 'import torch' > /dev/null 2>&1 && HAVE_TORCH=1

{
	echo "# gpu-issue19 on $(hostname) at $(date -u +%FT%TZ)"
	echo
	echo "kernel $(uname -r); $(head -1 /proc/driver/nvidia/version 2>/dev/null || echo 'no /proc/driver/nvidia/version')"
	echo
} > "$MD"

# ---- the machine, as the checks see it -----------------------------------
log "== machine"
run uname -a
run cat /proc/driver/nvidia/version
run cat /sys/module/nvidia/version
have nvidia-smi && run nvidia-smi -L
have nvidia-smi && { log "\$ nvidia-smi -q (selected lines)"; nvidia-smi -q 2>&1 | grep -iE 'GSP Firmware|Compute Mode|MIG Mode|Current +:|Confidential|Persistence|Product Name|Bus Id' >> "$LOG"; }
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] || continue
	log "pci $(basename "$d") device $(cat "$d/device") class $(cat "$d/class") driver $(basename "$(readlink "$d/driver" 2>/dev/null)" 2>/dev/null)"
done
run cat /proc/sys/kernel/osrelease
run ls -l "/lib/modules/$(uname -r)/modules.dep"
run grep -E '(^|/)nvidia[^:]*\.ko' "/lib/modules/$(uname -r)/modules.dep"
run ls /var/lib/dkms/nvidia
run cat /sys/kernel/security/lockdown
run ls -la /lib/firmware/nvidia
run ls -la "/lib/firmware/nvidia/$(cat /sys/module/nvidia/version 2>/dev/null)"
run grep -iE 'nvidia|imex' /proc/devices
run ls -la /dev/nvidia-caps-imex-channels
run grep -iE 'imex|EnableGpuFirmware' /proc/driver/nvidia/params
run ls -la /dev/kmsg
if have dmesg; then log "\$ dmesg | grep -iE 'NVRM|nvidia' | tail -20"; dmesg 2>&1 | grep -iE 'NVRM|nvidia' | tail -20 >> "$LOG"; fi

# ---- doctor ----------------------------------------------------------------
log "== doctor"
"$CT" doctor --color=never > "$OUTDIR/doctor.txt" 2>&1
echo "doctor exit $?" >> "$OUTDIR/doctor.txt"
"$CT" doctor --json > "$OUTDIR/doctor.json" 2> /dev/null
{
	echo "## doctor (Kernel module and Device nodes sections)"
	echo
	echo '```'
	sed -n '/^Device nodes/,/^Libraries/p' "$OUTDIR/doctor.txt" | grep -v '^Libraries'
	tail -2 "$OUTDIR/doctor.txt"
	echo '```'
	echo
} >> "$MD"

# ---- CUDA_VISIBLE_DEVICES: the real libcuda against cutrace's parser --------
log "== CUDA_VISIBLE_DEVICES"
UUID=$(nvidia-smi -L 2>/dev/null | sed -n 's/.*(UUID: \(GPU-[^)]*\)).*/\1/p' | head -1)
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ -n "$UUID" ] || UUID=GPU-00000000-0000-0000-0000-000000000000
SHORT=${UUID:0:12}            # GPU- and 8 hex digits
TINY=${UUID:0:6}              # GPU- and 2 hex digits
BARE=${UUID#GPU-}             # the UUID without its prefix
cat > "$W/cvd.py" << 'EOF'
import ctypes, os, sys
cu = ctypes.CDLL("libcuda.so.1")
r = cu.cuInit(0)
n = ctypes.c_int(-1)
r2 = cu.cuDeviceGetCount(ctypes.byref(n)) if r == 0 else -1
names = []
for i in range(max(n.value, 0)):
    d = ctypes.c_int(); b = ctypes.create_string_buffer(96); u = ctypes.create_string_buffer(16)
    cu.cuDeviceGet(ctypes.byref(d), i); cu.cuDeviceGetName(b, 96, d)
    names.append(b.value.decode())
nv = -1
try:
    ml = ctypes.CDLL("libnvidia-ml.so.1")
    if ml.nvmlInit_v2() == 0:
        c = ctypes.c_uint(0)
        if ml.nvmlDeviceGetCount_v2(ctypes.byref(c)) == 0:
            nv = c.value
except OSError:
    pass
print("cuInit=%d count=%d nvml=%d %s" % (r, n.value if r2 == 0 else -1, nv, ",".join(names)))
EOF
cat > "$W/torch_count.py" << 'EOF'
import torch
try:
    print("torch device_count=%d is_available=%s" % (torch.cuda.device_count(), torch.cuda.is_available()))
    torch.zeros(1, device="cuda")
    print("torch zeros: ok")
except Exception as e:
    print("torch: %s" % str(e).splitlines()[0])
EOF
{
	echo "## CUDA_VISIBLE_DEVICES read by the real libcuda ($NGPU GPU(s); UUID $UUID)"
	echo
	echo "| CUDA_VISIBLE_DEVICES | libcuda: cuInit, cuDeviceGetCount | cutrace's verdict (cutrace run) | torch |"
	echo "|---|---|---|---|"
} >> "$MD"
i=0
for v in "" "0" "1" "0,0" "0,1" "0gpu" "+0" "-0" "-1" " 0" "one,0" "0,one" \
	"$UUID" "$SHORT" "$TINY" "$(printf '%s' "$UUID" | tr 'A-Za-z' 'a-zA-Z')" "$BARE" \
	"GPU-ffffffff" "0,$UUID" "MIG-$BARE" "MIG-$UUID/0/0"; do
	i=$((i + 1))
	out=$(CUDA_VISIBLE_DEVICES=$v python3 "$W/cvd.py" 2>&1 | tail -1)
	vd=$(CUDA_VISIBLE_DEVICES=$v "$CT" run -q -o "$W/cvd$i" -- python3 "$W/cvd.py" 2>&1 | grep -m1 'FAILED\|OK' | sed 's/^cutrace: pid [0-9]* ([^)]*) on [^:]*: //')
	t=-
	case $v in "" | 0 | 1 | 0,0 | "$UUID" | "$SHORT") [ $HAVE_TORCH = 1 ] && t=$(CUDA_VISIBLE_DEVICES=$v timeout 60 python3 "$W/torch_count.py" 2>&1 | tr '\n' ' ' | cut -c1-160) ;; esac
	# which UUID questions libcuda asked RM under this value (the verdict checks GPU- entries
	# against their answers): GPU_GET_GID_INFO, GPU_GET_UUID_FROM_GPU_ID
	uq=$("$CT" show --only ioctl "$W/cvd$i" 2>/dev/null | grep -c 'GID_INFO\|UUID_FROM_GPU_ID' || true)
	log "CVD='$v': $out | cutrace: $vd | $t | RM UUID questions: ${uq:-?}"
	q='`'
	printf '| %s%s%s | %s | %s | %s |\n' "$q" "$v" "$q" "$out" "${vd:-healthy}" "$t" >> "$MD"
done
echo >> "$MD"
# cutrace's own reading of each value, on this machine (doctor's Environment section)
for v in "0,0" "0gpu" "$SHORT" "GPU-ffffffff" "MIG-$BARE"; do
	log "doctor with CUDA_VISIBLE_DEVICES='$v':"
	CUDA_VISIBLE_DEVICES=$v "$CT" doctor --no-probe --color=never 2>&1 | grep 'CUDA_VISIBLE_DEVICES' >> "$LOG"
done

# ---- the new scenarios -------------------------------------------------------
log "== scenarios"
{
	echo "## Scenarios of issue 19 (catalog Part C)"
	echo
	echo "| scenario | program | result | cutrace's verdict |"
	echo "|---|---|---|---|"
} >> "$MD"
for s in gpu-lost cc-not-ready cvd-wrong-uuid uvm-not-in-container sandbox-rejected vgpu-unlicensed \
	caps-no-compute; do
	for p in probe torch; do
		d=$W/sc-$s-$p
		if [ $p = probe ]; then
			out=$("$CT" probe -q -o "$d" --ctx --scenario $s 2>&1)
			res=$(printf '%s\n' "$out" | grep -oE 'cu(Init|DevicePrimaryCtxRetain)\([^)]*\) = [0-9]+[^,]*' | tail -1)
		else
			[ $HAVE_TORCH = 1 ] || continue
			out=$("$CT" run -q -o "$d" --scenario $s --timeout 120s -- python3 "$W/torch_count.py" 2>&1)
			res=$(printf '%s\n' "$out" | grep -m1 '^torch' )
		fi
		vd=$(printf '%s\n' "$out" | grep -m1 'FAILED' | sed 's/^cutrace: pid [0-9]* ([^)]*) on [^:]*: //')
		log "--- $s $p"; printf '%s\n' "$out" >> "$LOG"
		printf '| %s | %s | %s | %s |\n' "$s" "$p" "${res:-?}" "${vd:-healthy}" >> "$MD"
	done
done
(cd "$W" && tar czf "$OUTDIR/traces.tar.gz" sc-* cvd* 2> /dev/null)
echo >> "$MD"
echo "log: gpu-issue19.log; doctor: doctor.txt, doctor.json; traces: traces.tar.gz" >> "$MD"
cat "$MD"
exit 0
