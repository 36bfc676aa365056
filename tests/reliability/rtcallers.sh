#!/usr/bin/env bash
# rel_runtime_callers: the shim's runtime exports (cudaRuntimeGetVersion,
# cudaGetDevice, ...) send each caller to the cudart it would have bound to
# (issue 15, item 2), from a small table of caller objects.  Here more
# callers than the table has rows (24 extensions loaded RTLD_LOCAL, the even
# ones linked to one stand-in cudart, the odd ones to another), called from
# 8 threads at once, first calls racing, then half of them dlclose()d and
# loaded again in the other runtime's place.  The program checks every
# answer itself (mismatches=0) and prints the same lines without and with
# the shim.  The real cudarts are tests/real/two_runtimes.sh's.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
command -v cc >/dev/null || { skip "no C compiler"; finish; }

d=$T/rt && mkdir -p "$d/a" "$d/b"
# two runtimes: their own sonames, their own answers
for v in a:9001 b:9101; do
	n=${v%%:*} ver=${v#*:}
	cat >"$d/$n/rt.c" <<C
int cudaRuntimeGetVersion(int *v) { *v = $ver; return 0; }
int cudaGetDevice(int *dev) { *dev = $ver % 100; return 0; }
C
	cc -shared -fPIC -Wl,-soname,libcudart.so.$ver -o "$d/$n/libcudart.so.$ver" "$d/$n/rt.c" || {
		bad "the stand-in runtimes do not build"
		finish
	}
done
cat >"$d/ext.c" <<'C'
int cudaRuntimeGetVersion(int *);
int cudaGetDevice(int *);
int ext_call(void)
{
	int v = -1, dev = -1;

	if (cudaRuntimeGetVersion(&v) || cudaGetDevice(&dev) || dev != v % 100)
		return -1;
	return v;
}
C
# one build per runtime, copied: glibc loads each copy (its own inode) as
# an object of its own; ext<k>x.so, loaded again later, uses the other runtime
cc -shared -fPIC -o "$d/ext_a.so" "$d/ext.c" -L"$d/a" -Wl,-rpath,"$d/a" -l:libcudart.so.9001 &&
	cc -shared -fPIC -o "$d/ext_b.so" "$d/ext.c" -L"$d/b" -Wl,-rpath,"$d/b" -l:libcudart.so.9101 ||
	{ bad "the extensions do not build"; finish; }
for k in $(seq 0 23); do
	if [ $((k % 2)) = 0 ]; then rt=a ort=b; else rt=b ort=a; fi
	cp "$d/ext_$rt.so" "$d/ext$k.so" && cp "$d/ext_$ort.so" "$d/ext${k}x.so" || { bad "no copies"; finish; }
done
cat >"$d/host.c" <<'C'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#define NEXT 24
#define NTHR 8
static const char *dir;
static int (*call[NEXT])(void);
static int want[NEXT];
static void *handle[NEXT];
static long bad[NTHR], calls[NTHR];

static int load(int k, int swapped)
{
	char p[4096];

	snprintf(p, sizeof p, "%s/ext%d%s.so", dir, k, swapped ? "x" : "");
	handle[k] = dlopen(p, RTLD_NOW | RTLD_LOCAL);
	if (!handle[k]) {
		printf("dlopen: %s\n", dlerror());
		return -1;
	}
	call[k] = (int (*)(void))dlsym(handle[k], "ext_call");
	want[k] = (k % 2 == 0) != (swapped != 0) ? 9001 : 9101;
	return 0;
}

static void *worker(void *arg)
{
	int t = (int)(long)arg;

	for (int i = 0; i < 1500; i++) {
		int k = (i * 7 + t * 5) % NEXT;
		if (call[k]() != want[k])
			bad[t]++;
		calls[t]++;
	}
	return NULL;
}

static long round_(const char *what)
{
	pthread_t th[NTHR];
	long b = 0, c = 0;

	memset(bad, 0, sizeof bad);
	memset(calls, 0, sizeof calls);
	for (long t = 0; t < NTHR; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (int t = 0; t < NTHR; t++) {
		pthread_join(th[t], NULL);
		b += bad[t];
		c += calls[t];
	}
	printf("%s: calls=%ld mismatches=%ld\n", what, c, b);
	return b;
}

int main(int argc, char **argv)
{
	long b;

	dir = argc > 1 ? argv[1] : ".";
	for (int k = 0; k < NEXT; k++)
		if (load(k, 0))
			return 2;
	b = round_("24 extensions, 8 threads");
	/* half of them unloaded, then loaded again linked to the other runtime
	 * (glibc may map them where the unloaded ones were) */
	for (int k = 0; k < NEXT; k += 2)
		dlclose(handle[k]);
	for (int k = 0; k < NEXT; k += 2)
		if (load(k, 1))
			return 2;
	b += round_("12 reloaded on the other runtime");
	return b != 0;
}
C
cc -O1 -o "$d/host" "$d/host.c" -ldl -pthread || { bad "the host program does not build"; finish; }

run3 "$T/plain" timeout 120 "$d/host" "$d"
run3 "$T/shim" timeout 120 env CUTRACE_DIR="$d" LD_PRELOAD="$SHIM" "$d/host" "$d"
if [ "$(cat "$T/plain.rc")" != 0 ] || ! grep -q 'mismatches=0' "$T/plain.out"; then
	bad "without the shim the program fails: exit $(cat "$T/plain.rc"): $(tr '\n' '|' <"$T/plain.out")"
else
	compare_runs "24 RTLD_LOCAL callers of 2 runtimes, 8 threads, 12 reloaded: $(tr '\n' '|' <"$T/shim.out")" \
		"$T/plain" "$T/shim"
fi
finish
