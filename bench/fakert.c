/*
 * libbench_cudart.so: a stand-in runtime for the runtime pass-through
 * benchmark (scripts/bench.sh, section pass): cudaMalloc and cudaGetDevice
 * that do nothing but succeed, so that callgrind counts what the shim adds
 * to a runtime call and nothing of a real cudart.
 */
#include <stddef.h>

int cudaMalloc(void **p, size_t size)
{
	static char block[64];

	(void)size;
	*p = block;
	return 0;
}

int cudaGetDevice(int *d)
{
	*d = 0;
	return 0;
}
