#!/usr/bin/env bash
# Two CUDA runtimes in one process (issue 15, item 2): two extensions loaded
# RTLD_LOCAL, as Python loads them, one linked to cudart 13 (the toolkit's)
# and one to cudart 11.8 (Debian's libcudart11.0), against the real libcuda
# 535, print the same lines and exit the same with and without cutrace, in
# both load orders, and with a program that links cudart 11.8 itself (the
# cudart 13 extension's versioned references skip it).  Each extension's
# cudaMalloc and cudaMemcpy (hooked and not hooked) reach the same runtime.
# The trace keeps both runtimes' codes (35 from cudart 13, 100 from 11.8).
#
#   two_runtimes.sh CUTRACE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cutrace=${1:?usage: two_runtimes.sh CUTRACE}
. "$here/real.sh"
real_require
cuda=${CUDA_HOME:-/usr/local/cuda}
rt13=$(ls "$cuda"/lib64/libcudart.so.13 "$cuda"/targets/*/lib/libcudart.so.13 2>/dev/null | head -1)
[ -n "$rt13" ] || { echo "SKIP: no toolkit libcudart.so.13 under $cuda (set CUDA_HOME)"; exit 77; }
command -v cc >/dev/null || { echo "SKIP: no C compiler"; exit 77; }

W=$(mktemp -d "${TMPDIR:-/tmp}/ct_2rt_XXXXXX")
trap 'real_cleanup_nodes; rm -rf "$W"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cat >"$W/ext.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
int cudaRuntimeGetVersion(int *);
int cudaGetDeviceCount(int *);
int cudaMalloc(void **, size_t);
int cudaMemcpy(void *, const void *, size_t, int); /* not hooked */
void ext_run(const char *tag)
{
	int v = -1, n = -1, a = 0, b = 0;
	void *p = NULL;
	int r1, r2, e1, e2;

	errno = 4242; /* the first calls: the shim looks the caller's runtime up */
	r1 = cudaRuntimeGetVersion(&v);
	e1 = errno;
	errno = 4242;
	r2 = cudaGetDeviceCount(&n);
	e2 = errno;
	int r3 = cudaMalloc(&p, 64);
	int r4 = cudaMemcpy(&a, &b, 0, 0);
	printf("%s: cudaRuntimeGetVersion=%d version=%d errno=%d cudaGetDeviceCount=%d count=%d errno=%d "
	       "cudaMalloc=%d cudaMemcpy=%d\n",
	       tag, r1, v, e1, r2, n, e2, r3, r4);
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
#ifdef CLOSE
		/* the next extension may be mapped where this one (and its
		 * cudart) was: the shim must not keep this one's runtime for it */
		dlclose(h);
		printf("closed: %s\n", dlopen(argv[i], RTLD_NOW | RTLD_NOLOAD) ? "still loaded" : "unloaded");
#endif
	}
	return 3;
}
C
d13=$(dirname "$rt13")
cc -shared -fPIC -o "$W/ext13.so" "$W/ext.c" -L"$d13" -Wl,-rpath,"$d13" -l:libcudart.so.13 &&
	cc -shared -fPIC -o "$W/ext11.so" "$W/ext.c" -L"$REAL_CUDART_DIR" -Wl,-rpath,"$REAL_CUDART_DIR" \
		-l:libcudart.so.11.0 &&
	cc -o "$W/host" "$W/host.c" -ldl &&
	cc -DCLOSE -o "$W/hostc" "$W/host.c" -ldl &&
	cc -DLINK_RT -o "$W/host11" "$W/host.c" -L"$REAL_CUDART_DIR" -Wl,-rpath,"$REAL_CUDART_DIR" \
		-l:libcudart.so.11.0 -ldl || { bad "the test programs do not build"; exit 1; }

export LD_LIBRARY_PATH=$REAL_LIBCUDA_DIR
n=0
for c in "host ext13 ext11" "host ext11 ext13" "host11 ext13 ext11" "hostc ext11 ext13" "hostc ext13 ext11"; do
	set -- $c
	n=$((n + 1))
	"$W/$1" "$W/$2.so" "$W/$3.so" >"$W/plain$n" 2>/dev/null
	rc_plain=$?
	"$cutrace" run --color=never -o "$W/tr$n" -- "$W/$1" "$W/$2.so" "$W/$3.so" >"$W/traced$n" 2>"$W/err$n"
	rc_traced=$?
	if ! cmp -s "$W/plain$n" "$W/traced$n"; then
		bad "$c: the output differs with cutrace:"
		diff "$W/plain$n" "$W/traced$n" | sed 's/^/    /'
	fi
	[ "$rc_plain" = "$rc_traced" ] || bad "$c: exit $rc_plain without cutrace, $rc_traced with it"
	grep -q 'version=13000' "$W/plain$n" || bad "$c: cudart 13 did not answer: $(cat "$W/plain$n")"
	# one extension's hooked cudaMalloc and unhooked cudaMemcpy: one runtime
	while read -r tag rest; do
		m=$(sed -n 's/.*cudaMalloc=\([0-9]*\).*/\1/p' <<<"$rest")
		y=$(sed -n 's/.*cudaMemcpy=\([0-9]*\).*/\1/p' <<<"$rest")
		[ -z "$m" ] || [ "$m" = "$y" ] || bad "$c: $tag cudaMalloc=$m but cudaMemcpy=$y: two runtimes mixed"
	done <"$W/traced$n"
	shown=$("$cutrace" show --color=never "$W/tr$n" 2>&1)
	grep -q 'cudaGetDeviceCount() = cudaErrorInsufficientDriver (35)' <<<"$shown" ||
		bad "$c: the trace lacks cudart 13's 35"
	grep -q 'cudaGetDeviceCount() = cudaErrorNoDevice (100)' <<<"$shown" ||
		bad "$c: the trace lacks cudart 11.8's 100"
	[ $fail = 0 ] && echo "ok: $c: $(tr '\n' '|' <"$W/traced$n")"
done
exit $fail
