#!/usr/bin/env bash
# Issue 15 item 2 on a real GPU: two CUDA runtimes in one process.  Two
# extensions loaded RTLD_LOCAL, one linked to the toolkit's cudart 13 and one
# to cudart 11.8 (Debian's libcudart11.0, from tests/real/fetch.sh), each
# allocating on the GPU and copying a value there and back, print the same
# lines and exit the same with and without `cutrace run`: both load orders,
# a program linked to cudart 11.8 itself, and Python (torch initialized
# first, its own cudart, then both extensions through ctypes, RTLD_LOCAL as
# ctypes loads them).  Without cudart 11.8 the cases with only cudart 13 run.
#
#   scripts/gpu-two-runtimes.sh -c PATH_TO_CUTRACE -o OUTDIR [-r LIBCUDART_11]
#
# PATH_TO_CUTRACE: build/onefile/cutrace.  LIBCUDART_11: libcudart.so.11.8.*
# (default: the one under build/tests/real-nvidia/root, which the device run
# must carry).  OUTDIR gets gpu-two-runtimes.md (one row per case: same
# output, same exit, the lines) and each case's outputs and `show` text.
# Needs cc and the toolkit's cudart 13; python3+torch when present.  About
# 30 s on the H200; exit 0 when it ran (the table says what matched).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
c="" out=""
rt11=$here/build/tests/real-nvidia/root/usr/lib/x86_64-linux-gnu/libcudart.so.11.8.89
while getopts "c:o:r:h" o; do
	case $o in
	c) c=$OPTARG ;;
	o) out=$OPTARG ;;
	r) rt11=$OPTARG ;;
	*) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
[ -n "$c" ] && [ -n "$out" ] || { echo "usage: gpu-two-runtimes.sh -c PATH_TO_CUTRACE -o OUTDIR [-r LIBCUDART_11]" >&2; exit 2; }
[ -x "$c" ] || { echo "gpu-two-runtimes: $c is not executable" >&2; exit 2; }
c=$(cd "$(dirname "$c")" && pwd)/$(basename "$c")
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
md=$out/gpu-two-runtimes.md
W=$(mktemp -d "${TMPDIR:-/tmp}/cutrace-2rt.XXXXXX")
trap 'rm -rf "$W"' EXIT
export CUTRACE_DIR=$W/traces
mkdir -p "$CUTRACE_DIR"

{
	echo "# two CUDA runtimes in one process, on $(hostname) ($(date -u +%FT%TZ))"
	echo
	echo "driver: $(head -1 /proc/driver/nvidia/version 2>/dev/null || echo '?'); cutrace: $("$c" --version 2>&1 | head -1)"
} >"$md"
note() { echo "$*" >>"$md"; }

command -v cc >/dev/null || { note "SKIP: no C compiler"; cat "$md"; exit 0; }
cuda=${CUDA_HOME:-/usr/local/cuda}
rt13=$(ls "$cuda"/lib64/libcudart.so.13 "$cuda"/targets/*/lib/libcudart.so.13 2>/dev/null | head -1)
[ -n "$rt13" ] || { note "SKIP: no libcudart.so.13 under $cuda"; cat "$md"; exit 0; }
note "cudart 13: $(readlink -f "$rt13")"
have11=0
if [ -f "$rt11" ]; then
	mkdir -p "$W/rt11"
	cp "$rt11" "$W/rt11/" && ln -sf "$(basename "$rt11")" "$W/rt11/libcudart.so.11.0" && have11=1
	note "cudart 11.8: $rt11"
else
	note "cudart 11.8: not found at $rt11 (-r): the cases with it are left out"
fi
note ""

cat >"$W/ext.c" <<'C'
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
int cudaRuntimeGetVersion(int *);
int cudaGetDeviceCount(int *);
int cudaSetDevice(int);
int cudaMalloc(void **, size_t);
int cudaFree(void *);
int cudaMemcpy(void *, const void *, size_t, int); /* not hooked */
void ext_run(const char *tag)
{
	int v = -1, n = -1, in = 4711, back = 0, r1, r2, r3, r4, r5, r6, r7, e1;
	void *p = NULL;

	errno = 4242;
	r1 = cudaRuntimeGetVersion(&v);
	e1 = errno;
	r2 = cudaGetDeviceCount(&n);
	r3 = cudaSetDevice(0);
	r4 = cudaMalloc(&p, 64);
	r5 = p ? cudaMemcpy(p, &in, sizeof in, 1) : -1; /* host to device */
	r6 = p ? cudaMemcpy(&back, p, sizeof back, 2) : -1; /* device to host */
	r7 = p ? cudaFree(p) : -1;
	printf("%s: version=%d (%d, errno %d) count=%d (%d) setdevice=%d malloc=%d memcpy=%d,%d back=%d free=%d\n",
	       tag, v, r1, e1, n, r2, r3, r4, r5, r6, back, r7);
	fflush(stdout);
}
C
cat >"$W/host.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#ifdef LINK_RT
int cudaRuntimeGetVersion(int *);
#endif
int main(int argc, char **argv)
{
#ifdef LINK_RT
	int v = -1, r = cudaRuntimeGetVersion(&v);
	printf("host: cudaRuntimeGetVersion=%d version=%d\n", r, v);
#endif
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		void (*run)(const char *);
		if (!h) {
			printf("dlopen: %s\n", dlerror());
			return 2;
		}
		run = (void (*)(const char *))dlsym(h, "ext_run");
		run(i == 1 ? "first" : "second");
	}
	return 3;
}
C
d13=$(dirname "$rt13")
build() { "$@" 2>>"$out/build.log" || { note "build failed: $* (build.log)"; return 1; }; }
build cc -shared -fPIC -o "$W/ext13.so" "$W/ext.c" -L"$d13" -Wl,-rpath,"$d13" -l:libcudart.so.13 || { cat "$md"; exit 0; }
build cc -o "$W/host" "$W/host.c" -ldl || { cat "$md"; exit 0; }
if [ $have11 = 1 ]; then
	build cc -shared -fPIC -o "$W/ext11.so" "$W/ext.c" -L"$W/rt11" -Wl,-rpath,"$W/rt11" -l:libcudart.so.11.0 &&
		build cc -DLINK_RT -o "$W/host11" "$W/host.c" -L"$W/rt11" -Wl,-rpath,"$W/rt11" -l:libcudart.so.11.0 -ldl ||
		have11=0
fi

cat >"$W/py.py" <<'PY'
import ctypes, sys
import torch
x = torch.zeros(4, device="cuda") + 1
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count(),
      "sum", float(x.sum()))
for i, path in enumerate(sys.argv[1:]):
    ctypes.CDLL(path).ext_run(b"first" if i == 0 else b"second")
y = torch.ones(4, device="cuda") * 2
print("torch after", float(y.sum()))
PY

note "| case | same stdout | same exit | exit | stdout (without cutrace) |"
note "|---|---|---|---|---|"
same=0 total=0
runcase() { # name command...
	local name=$1 rp rt so ss
	shift
	total=$((total + 1))
	timeout 60 "$@" >"$out/$name.plain" 2>"$out/$name.plain.err"
	rp=$?
	timeout 60 "$c" run --color=never -o "$W/tr-$name" -- "$@" >"$out/$name.traced" 2>"$out/$name.traced.err"
	rt=$?
	"$c" show --color=never "$W/tr-$name" >"$out/$name.show" 2>&1
	so=no ss=no
	cmp -s "$out/$name.plain" "$out/$name.traced" && so=yes
	[ "$rp" = "$rt" ] && ss=yes
	[ $so$ss = yesyes ] && same=$((same + 1))
	note "| $name | $so | $ss | $rp / $rt | $(tr '\n' ' ' <"$out/$name.plain" | sed 's/|/\\|/g') |"
	[ $so = yes ] || diff "$out/$name.plain" "$out/$name.traced" >"$out/$name.diff"
}
runcase ext13_alone "$W/host" "$W/ext13.so"
if [ $have11 = 1 ]; then
	runcase ext13_ext11 "$W/host" "$W/ext13.so" "$W/ext11.so"
	runcase ext11_ext13 "$W/host" "$W/ext11.so" "$W/ext13.so"
	runcase host11_ext13_ext11 "$W/host11" "$W/ext13.so" "$W/ext11.so"
fi
if python3 -c 'import torch' >/dev/null 2>&1; then
	runcase torch_ext13 python3 "$W/py.py" "$W/ext13.so"
	[ $have11 = 1 ] && runcase torch_ext13_ext11 python3 "$W/py.py" "$W/ext13.so" "$W/ext11.so"
	[ $have11 = 1 ] && runcase torch_ext11_ext13 python3 "$W/py.py" "$W/ext11.so" "$W/ext13.so"
else
	note "| torch | - | - | - | python3 without torch: left out |"
fi
note ""
note "$same of $total cases: identical stdout and exit status with and without cutrace"
note ""
note "runtime lines in each trace (cutrace show):"
for f in "$out"/*.show; do
	note "- $(basename "$f" .show): $(grep -oE 'cuda(RuntimeGetVersion|GetDeviceCount|Malloc|SetDevice)\(\) = [A-Za-z]+ \([0-9]+\)' "$f" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
done
cat "$md"
exit 0
