/* rt_probe: the CUDA runtime path.  Built twice: rt_shared links the
 * toolkit's real libcudart.so.13, rt_static links libcudart_static.a.  Either
 * way the runtime dlopen()s libcuda.so.1 itself and reaches the driver only
 * through cuGetProcAddress (tracer/decode/ABI.md Appendix C).  Lines printed:
 * "NAME=RESULT [key=value]"; every step runs even after a failure, so the
 * output shows how each call reports it.  Exit 0 iff cudaGetDeviceCount
 * succeeded. */
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int v = 0;
    cudaError_t r = cudaRuntimeGetVersion(&v);
    printf("cudaRuntimeGetVersion=%d version=%d\n", (int)r, r ? 0 : v);
    v = 0;
    r = cudaDriverGetVersion(&v);
    printf("cudaDriverGetVersion=%d version=%d\n", (int)r, r ? 0 : v);
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    printf("cudaGetDeviceCount=%d count=%d\n", (int)rc, rc ? 0 : count);
    printf("cudaSetDevice=%d\n", (int)cudaSetDevice(0));
    printf("cudaFree=%d\n", (int)cudaFree(0));
    void *p = NULL;
    r = cudaMalloc(&p, 1 << 20);
    printf("cudaMalloc=%d\n", (int)r);
    if (!r)
        printf("cudaFree(ptr)=%d\n", (int)cudaFree(p));
    return rc ? 1 : 0;
}
