/*
 * bench_rt: N calls of cudaMalloc into the runtime it is linked with
 * (bench/fakert.c), each in the non-inlined bench_rt_call, for callgrind
 * --toggle-collect=bench_rt_call (scripts/bench.sh, section pass).  The
 * shim records the first 32 cudaMalloc calls and then only failures: what
 * is left is the pass-through path (finding the caller's runtime included).
 *
 *   bench_rt N    prints "calls=N"
 * Link with -Wl,-z,now: no lazy binding inside the measured calls.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

int cudaMalloc(void **p, size_t size);

__attribute__((noinline, noclone, used)) int bench_rt_call(void **p)
{
	return cudaMalloc(p, 64);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	void *p = NULL;
	int bad = 0;

	for (int i = 0; i < 64; i++) /* past the recorded first calls */
		bad |= cudaMalloc(&p, 64);
	for (long i = 0; i < n; i++)
		bad |= bench_rt_call(&p);
	printf("calls=%ld\n", n);
	return bad != 0;
}
