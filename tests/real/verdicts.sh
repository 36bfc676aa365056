#!/usr/bin/env bash
# Verdicts against NVIDIA's real user-space libraries (Debian non-free 535 /
# cudart 11.8, fetched by tests/real/fetch.sh), on a machine without a GPU.
# One case per run; prints one "ok:" line with the verdict line cutrace
# printed, or "FAIL:" lines; exit 77 with one line when a case cannot run here.
#
#   verdicts.sh CASE CUTRACE FAKENV_LIB FAKECUDA_DIR
#
# Cases:
#   no_module_root   the probe as root on a machine with no NVIDIA kernel module:
#                    libcuda creates /dev/nvidiactl itself (mknodat), open ENXIO
#   no_module_user   the same as an unprivileged user (setpriv): libcuda opens nothing
#   no_module_helper the same with an NVIDIA device on the bus (tests/real/fakepci.c,
#                    $FAKEPCI_LIB): libcuda runs its setuid helper nvidia-modprobe
#                    (a script here that exits 1), recorded with its status
#   no_module_modprobe the same as root: libcuda runs "/sbin/modprobe nvidia" itself
#                    (redirected to a script that exits 1; waitpid with a NULL status)
#   nvml_alone       ctypes nvmlInit_v2 of libnvidia-ml 535 alone: 9
#   cudart11_rig     cudart 11.8 (ctypes) against the rig's fake libcuda
#   cudart11_stub    cudart 11.8 against the toolkit's stub libcuda
#   static_cudart    the rig's rt_static (cudart 13 linked statically) against
#                    libcuda 535 (CUDA 12.2): 35 from every call, never "OK"
#   skew_ldpath      libcuda 535 first on LD_LIBRARY_PATH in front of the rig's
#                    fake kernel module 580.159.04 (cuInit 803), a matching
#                    libcuda.so.580.159.04 later on the path
#   skew_abspath     the same libcuda 535 dlopen()ed by absolute path (ctypes)
# Every /dev/nvidia* node the real libcuda creates is removed again.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
case_=${1:?usage: verdicts.sh CASE CUTRACE FAKENV_LIB FAKECUDA_DIR}
cutrace=${2:?} fakenv=${3:?} fakecuda=${4:?}
. "$here/real.sh"
real_require
trap real_cleanup_nodes EXIT

W=$(mktemp -d "${TMPDIR:-/tmp}/ct_real_XXXXXX")
chmod 755 "$W"
trap 'real_cleanup_nodes; rm -rf "$W"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

no_module_here() {
	if [ -e /proc/driver/nvidia/version ] || [ -e /sys/module/nvidia ]; then
		echo "SKIP: this machine has an NVIDIA kernel module: the no-module cases need one without"
		exit 77
	fi
}

# verdict FIELD...: the verdict of the first traced process, as JSON fields, one per line
verdict() {
	"$cutrace" show --json "$W/traces" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["processes"][0] if "processes" in d else d
v = p["verdict"]
for k in sys.argv[1:]:
    x = v
    for part in k.split("."):
        x = x.get(part) if isinstance(x, dict) else None
    print(x if x is not None else "")
' "$@"
}

# fs_event CALL PATH RESULT [ARGS]: the first process's trace has CALL of
# PATH (format 1.5, family fs) that returned RESULT, with the JSON
# arguments ARGS ("KEY=VALUE ...")
fs_event() {
	"$cutrace" show --json "$W/traces" 2>/dev/null | python3 -c '
import json, sys
call, path, ret, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
d = json.load(sys.stdin)
p = d["processes"][0] if "processes" in d else d
es = [e for e in p["events"] if e["call"] == call and e["target"] == path and e.get("family") == "fs"]
want = dict(kv.split("=", 1) for kv in args.split()) if args else {}
if not es or es[0]["result"] != ret or any(str(es[0]["args"].get(k)) != v for k, v in want.items()):
    print("FAIL: no %s(%s) = %d [%s] in the trace: %s" % (call, path, ret, args,
          [(e["call"], e["target"], e["result"], e["args"]) for e in p["events"] if e.get("family") == "fs"][:12]))
' "$1" "$2" "$3" "${4:-}" | grep FAIL && fail=1
}

# ctl_was_there: had_ctl=1 when libcuda's first stat of /dev/nvidiactl in the
# trace found the node (made by a test running beside this one: then libcuda
# makes none), empty when it did not; FAIL when the stat is not in the trace
ctl_was_there() {
	had_ctl=$("$cutrace" show --json "$W/traces" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["processes"][0] if "processes" in d else d
es = [e for e in p["events"] if e["call"] in ("stat", "__xstat", "stat64", "__xstat64") and e["target"] == "/dev/nvidiactl"]
print("none" if not es else "1" if es[0]["result"] == 0 else "")
')
	[ "$had_ctl" != none ] || { bad "no stat of /dev/nvidiactl in the trace"; had_ctl=1; }
}

# fake_gpu: dev= the first PCI device, $W/config an NVIDIA 3D controller's config
# space (vendor 0x10de, device 0x2335, class 0x0302) for tests/real/fakepci.c;
# exit 77 where that cannot be
fake_gpu() {
	[ -f "${FAKEPCI_LIB:-}" ] || { echo "SKIP: no FAKEPCI_LIB (tests/real/fakepci.c)"; exit 77; }
	dev=$(ls /sys/bus/pci/devices 2>/dev/null | head -1)
	[ -n "$dev" ] || { echo "SKIP: no PCI device here to stand in for a GPU"; exit 77; }
	python3 -c 'import sys; b = bytearray(256); b[0:4] = bytes([0xde, 0x10, 0x35, 0x23]); b[0x0a] = 2; b[0x0b] = 3; open(sys.argv[1], "wb").write(b)' "$W/config"
}

# helper_runs PATH ARGS N: the first process's trace has N waitpid records, each
# of PATH run with ARGS that exited 1 (status 256), the exec not failed (format 1.6)
helper_runs() {
	"$cutrace" show --json "$W/traces" 2>/dev/null | python3 -c '
import json, sys
path, args, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = json.load(sys.stdin)
p = d["processes"][0] if "processes" in d else d
w = [e for e in p["events"] if e["call"] == "waitpid"]
ok = [e for e in w if e["target"] == path and e["args"].get("args") == args and e["args"].get("status") == 256
      and e["args"].get("exec_errno") == 0 and e["result"] == e["args"].get("pid") and not e["ok"]]
if len(w) != n or len(ok) != n:
    print("FAIL: want %d waitpid(%s %s) runs with status 256: %s" % (n, path, args, [(e["target"], e["args"]) for e in w][:3]))
' "$1" "$2" "$3" | grep FAIL && fail=1
}

# expect TEXT WHAT: WHAT (the verdict text) contains TEXT
expect() { case $2 in *"$1"*) ;; *) bad "the verdict lacks '$1': $2" ;; esac; }
refuse() { case $2 in *"$1"*) bad "the verdict says '$1': $2" ;; esac; }

run_cutrace() { # ENV... -- ARGS...: cutrace run -o $W/traces, output in $W/out, $W/err
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$cutrace" run --color=never -o "$W/traces" -- "$@" >"$W/out" 2>"$W/err"
}

line() { grep -m1 -E '^cutrace: pid [0-9]+ ' "$W/err" | sed 's/^cutrace: pid [0-9]* ([^)]*) on [^:]*: //'; }

NV=$REAL_LIBCUDA_DIR
cat >"$W/nvml.py" <<'PY'
import ctypes
nv = ctypes.CDLL("libnvidia-ml.so.1")
print("nvmlInit_v2=%d" % nv.nvmlInit_v2())
PY
cat >"$W/rt11.py" <<'PY'
import ctypes, sys
rt = ctypes.CDLL("libcudart.so.11.0")
v = ctypes.c_int(0)
print("cudaRuntimeGetVersion=%d version=%d" % (rt.cudaRuntimeGetVersion(ctypes.byref(v)), v.value))
n = ctypes.c_int(0)
r = rt.cudaGetDeviceCount(ctypes.byref(n))
print("cudaGetDeviceCount=%d count=%d" % (r, n.value))
sys.exit(1 if r else 0)
PY
chmod 644 "$W"/*.py

case $case_ in
no_module_root)
	no_module_here
	[ "$(id -u)" = 0 ] || { echo "SKIP: not root (the root case makes libcuda create /dev/nvidiactl)"; exit 77; }
	run_cutrace LD_LIBRARY_PATH="$NV" -- "$(dirname "$cutrace")/cutrace-probe"
	ctl_was_there
	all=$(verdict layer summary fix hint step.text final.code | tr '\n' ' ')
	# format 1.5: what libcuda did before it opened the node
	if [ -z "$had_ctl" ]; then
		expect "libcuda created /dev/nvidiactl itself (mknod c 195:255)" "$all"
		fs_event __xmknod /dev/nvidiactl 0 "mode=020666 rdev=195:255"
	else
		echo "note: /dev/nvidiactl was there when libcuda looked (another test's?): it made no node, the mknod is not checked"
	fi
	fs_event access /sys/module/nvidia/initstate -1
	[ -e /usr/bin/nvidia-modprobe ] || expect "libcuda looked for /usr/bin/nvidia-modprobe" "$all"
	[ "$(verdict layer)" = kernel-handshake ] || bad "layer $(verdict layer), want kernel-handshake: $all"
	expect "the NVIDIA kernel module is not loaded" "$all"
	expect "no /proc/driver/nvidia/version" "$all"
	expect "major 195 absent from /proc/devices" "$all"
	expect "ENXIO" "$all"
	expect "modprobe nvidia" "$all"
	expect "dkms" "$all"
	expect "Secure Boot" "$all"
	expect "uname -r = $(uname -r)" "$all"
	refuse "check the node" "$all"
	[ "$(verdict final.code)" = 100 ] || bad "final code $(verdict final.code), want cuInit's 100"
	;;
no_module_user)
	no_module_here
	command -v setpriv >/dev/null || { echo "SKIP: no setpriv to run as an unprivileged user"; exit 77; }
	[ "$(id -u)" = 0 ] || { echo "SKIP: not root (needed to switch to the nobody user)"; exit 77; }
	mkdir -p "$W/traces" && chown nobody "$W/traces"
	# the libraries must be readable by nobody: a copy under $W
	mkdir -p "$W/nv" && cp -a "$NV"/. "$W/nv/" && chmod -R a+rX "$W/nv"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		env HOME="$W" LD_LIBRARY_PATH="$W/nv" "$cutrace" run --color=never -o "$W/traces" -- \
		"$(dirname "$cutrace")/cutrace-probe" >"$W/out" 2>"$W/err"
	all=$(verdict layer summary fix hint step.text final.code | tr '\n' ' ')
	ctl_was_there
	# format 1.5: libcuda tried to make the node and was refused
	if [ -z "$had_ctl" ]; then
		expect "libcuda tried to create /dev/nvidiactl (mknod = EACCES)" "$all"
		fs_event __xmknod /dev/nvidiactl -1 "mode=020666 rdev=195:255"
	fi
	[ "$(verdict layer)" = kernel-handshake ] || bad "layer $(verdict layer), want kernel-handshake: $all"
	expect "the NVIDIA kernel module is not loaded" "$all"
	expect "modprobe nvidia" "$all"
	expect "CUDA_VISIBLE_DEVICES is not the cause" "$all"
	refuse "check NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES" "$all"
	[ "$(verdict final.code)" = 100 ] || bad "final code $(verdict final.code), want cuInit's 100"
	;;
no_module_helper)
	no_module_here
	command -v setpriv >/dev/null || { echo "SKIP: no setpriv to run as an unprivileged user"; exit 77; }
	[ "$(id -u)" = 0 ] || { echo "SKIP: not root (needed to switch to the nobody user)"; exit 77; }
	fake_gpu
	mkdir -p "$W/traces" && chown nobody "$W/traces"
	mkdir -p "$W/nv" && cp -a "$NV"/. "$W/nv/" && chmod -R a+rX "$W/nv"
	cp "$FAKEPCI_LIB" "$W/libfakepci.so" && chmod 755 "$W/libfakepci.so"
	printf '#!/bin/sh\necho ran >> "%s/ran"\nexit 1\n' "$W" >"$W/nvidia-modprobe"
	chmod 755 "$W/nvidia-modprobe" && : >"$W/ran" && chmod 666 "$W/ran" "$W/config"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		env HOME="$W" LD_LIBRARY_PATH="$W/nv" FAKEPCI_DEV="$dev" FAKEPCI_CONFIG="$W/config" \
		FAKEPCI_MODPROBE="$W/nvidia-modprobe" LD_PRELOAD="$W/libfakepci.so" \
		"$cutrace" run --color=never -o "$W/traces" -- "$(dirname "$cutrace")/cutrace-probe" >"$W/out" 2>"$W/err"
	runs=$(wc -l <"$W/ran")
	[ "$runs" -gt 0 ] || { echo "SKIP: libcuda did not run nvidia-modprobe here (it found no NVIDIA device): $(head -3 "$W/err")"; exit 77; }
	all=$(verdict layer summary fix hint step.text final.code | tr '\n' ' ')
	[ "$(verdict layer)" = kernel-handshake ] || bad "layer $(verdict layer), want kernel-handshake: $all"
	expect "the NVIDIA kernel module is not loaded" "$all"
	expect "libcuda ran /usr/bin/nvidia-modprobe $runs time" "$all"
	expect "exited 1 (it could not load the module or make the nodes)" "$all"
	helper_runs /usr/bin/nvidia-modprobe "" "$runs"
	[ "$(verdict final.code)" = 100 ] || bad "final code $(verdict final.code), want cuInit's 100"
	;;
no_module_modprobe)
	no_module_here
	[ "$(id -u)" = 0 ] || { echo "SKIP: not root (libcuda runs modprobe itself only as root)"; exit 77; }
	fake_gpu
	printf '#!/bin/sh\necho "$*" >> "%s/ran"\nexit 1\n' "$W" >"$W/modprobe"
	chmod 755 "$W/modprobe" && : >"$W/ran"
	run_cutrace LD_LIBRARY_PATH="$NV" FAKEPCI_DEV="$dev" FAKEPCI_CONFIG="$W/config" \
		FAKEPCI_SBIN_MODPROBE="$W/modprobe" LD_PRELOAD="$FAKEPCI_LIB" -- "$(dirname "$cutrace")/cutrace-probe"
	runs=$(grep -c '^nvidia$' "$W/ran")
	[ "$runs" -gt 0 ] || { echo "SKIP: libcuda did not run modprobe here (/proc/sys/kernel/modprobe names another program?): $(cat "$W/ran")"; exit 77; }
	all=$(verdict layer summary fix hint step.text final.code | tr '\n' ' ')
	[ "$(verdict layer)" = kernel-handshake ] || bad "layer $(verdict layer), want kernel-handshake: $all"
	expect "the NVIDIA kernel module is not loaded" "$all"
	expect "libcuda ran /sbin/modprobe $runs time" "$all"
	helper_runs /sbin/modprobe nvidia "$runs"
	;;
nvml_alone)
	no_module_here
	run_cutrace LD_LIBRARY_PATH="$NV" -- python3 "$W/nvml.py"
	grep -q 'nvmlInit_v2=9' "$W/out" || bad "nvmlInit_v2 did not return 9: $(cat "$W/out" "$W/err")"
	all=$(verdict layer summary fix final.code | tr '\n' ' ')
	[ "$(verdict layer)" = kernel-handshake ] || bad "layer $(verdict layer), want kernel-handshake: $all"
	expect "the NVIDIA kernel module is not loaded" "$all"
	expect "NVML_ERROR_DRIVER_NOT_LOADED" "$all"
	[ "$(verdict final.code)" = 9 ] || bad "final code $(verdict final.code), want NVML's 9"
	;;
cudart11_rig)
	run_cutrace LD_LIBRARY_PATH="$fakecuda:$REAL_CUDART_DIR" LD_PRELOAD="$fakenv" -- python3 "$W/rt11.py"
	grep -q 'cudaGetDeviceCount=' "$W/out" || bad "the cudart 11.8 program did not run: $(cat "$W/out" "$W/err")"
	all=$(verdict ok layer summary fix contract.runtime_version | tr '\n' ' ')
	if grep -q 'cudaGetDeviceCount=0' "$W/out"; then
		[ "$(verdict ok)" = True ] || bad "cudaGetDeviceCount succeeded but the verdict is not OK: $all"
	else
		# the fake libcuda lacks most of the entry points cudart 11.8 looks up
		[ "$(verdict layer)" = loader ] || bad "layer $(verdict layer), want loader: $all"
		expect "does not provide driver entry points" "$all"
		expect "cudaErrorSymbolNotFound" "$all"
	fi
	[ "$(verdict contract.runtime_version)" = 11080 ] || bad "runtime version $(verdict contract.runtime_version), want 11080"
	;;
cudart11_stub)
	stub=
	for s in "${CUDA_HOME:-/usr/local/cuda}"/lib64/stubs/libcuda.so /usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so; do
		[ -f "$s" ] && { stub=$s; break; }
	done
	[ -n "$stub" ] || { echo "SKIP: no CUDA toolkit stub libcuda.so (set CUDA_HOME)"; exit 77; }
	mkdir -p "$W/stub" && ln -s "$stub" "$W/stub/libcuda.so.1"
	run_cutrace LD_LIBRARY_PATH="$W/stub:$REAL_CUDART_DIR" -- python3 "$W/rt11.py"
	grep -q 'cudaGetDeviceCount=34' "$W/out" || bad "cudaGetDeviceCount did not return 34: $(cat "$W/out")"
	all=$(verdict layer summary fix final.code | tr '\n' ' ')
	[ "$(verdict layer)" = loader ] || bad "layer $(verdict layer), want loader: $all"
	expect "stub libcuda" "$all"
	expect "stubs directory" "$all"
	;;
static_cudart)
	rts=$(dirname "$fakecuda")/../programs/rt_static
	[ -x "$rts" ] || { echo "SKIP: no rt_static (no libcudart_static.a in the toolkit)"; exit 77; }
	run_cutrace LD_LIBRARY_PATH="$NV" -- "$rts"
	grep -q 'cudaGetDeviceCount=35' "$W/out" || bad "cudaGetDeviceCount did not return 35: $(cat "$W/out")"
	all=$(verdict ok layer summary fix final.code final.call contract.runtime_version | tr '\n' ' ')
	[ "$(verdict ok)" = False ] || bad "a static runtime that returned 35 is called OK: $all"
	[ "$(verdict final.code)" = 35 ] || bad "final code $(verdict final.code), want the runtime's 35: $all"
	expect "linked statically" "$all"
	expect "cuDriverGetVersion = 12020" "$all"
	;;
skew_ldpath)
	# the matching library: the rig's fake libcuda under the module's version's name
	mkdir -p "$W/good" && cp "$fakecuda/libcuda.so.1" "$W/good/libcuda.so.580.159.04"
	run_cutrace LD_LIBRARY_PATH="$NV:$W/good" LD_PRELOAD="$fakenv" -- "$(dirname "$cutrace")/cutrace-probe"
	grep -q 'cuInit(0) = 803' "$W/out" || bad "cuInit did not return 803: $(cat "$W/out")"
	all=$(verdict layer summary fix | tr '\n' ' ')
	[ "$(verdict layer)" = kernel-handshake ] || bad "layer $(verdict layer), want kernel-handshake: $all"
	expect "is version $REAL_VERSION but the kernel module is 580.159.04" "$all"
	expect "LD_LIBRARY_PATH entry $NV (1 of 2)" "$all"
	expect "remove $NV from LD_LIBRARY_PATH: it shadows $W/good/libcuda.so.580.159.04, which matches the kernel module" "$all"
	refuse "reboot" "$all"
	;;
skew_abspath)
	cat >"$W/abs.py" <<'PY'
import ctypes, sys
print("cuInit=%d" % ctypes.CDLL(sys.argv[1]).cuInit(0))
PY
	run_cutrace LD_PRELOAD="$fakenv" -- python3 "$W/abs.py" "$NV/libcuda.so.1"
	grep -q 'cuInit=803' "$W/out" || bad "cuInit did not return 803: $(cat "$W/out")"
	all=$(verdict layer summary fix | tr '\n' ' ')
	[ "$(verdict layer)" = kernel-handshake ] || bad "layer $(verdict layer), want kernel-handshake: $all"
	expect "a dlopen by absolute path (\"$NV/libcuda.so.1\")" "$all"
	expect "load libcuda.so.1 by name instead" "$all"
	refuse "reboot" "$all"
	;;
*)
	echo "verdicts.sh: unknown case $case_" >&2
	exit 2
	;;
esac
[ $fail -eq 0 ] && echo "ok: $case_ (libcuda $REAL_VERSION): $(line)"
[ $fail -eq 0 ] || { echo "--- stdout"; cat "$W/out"; echo "--- stderr"; head -30 "$W/err"; }
exit $fail
