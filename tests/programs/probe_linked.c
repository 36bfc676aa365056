/* probe_linked: the driver API reached through a plain link against
 * libcuda.so.1 (DT_NEEDED), the way most C/C++ programs built with -lcuda do.
 * Prototypes are declared here (see tests/rig/fakecuda.c for why cuda.h is
 * avoided).  Lines printed: "NAME=RESULT [key=value]".
 * usage: probe_linked [--no-init] [--twice] [--dev N] [--ctx] [--mem] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;

CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *dev, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t size);
CUresult cuMemFree_v2(CUdeviceptr ptr);

int main(int argc, char **argv)
{
    int no_init = 0, twice = 0, ctx = 0, mem = 0, ordinal = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-init"))
            no_init = 1;
        else if (!strcmp(argv[i], "--twice"))
            twice = 1;
        else if (!strcmp(argv[i], "--ctx"))
            ctx = 1;
        else if (!strcmp(argv[i], "--mem"))
            ctx = mem = 1;
        else if (!strcmp(argv[i], "--dev") && i + 1 < argc)
            ordinal = atoi(argv[++i]);
        else {
            fprintf(stderr, "probe_linked: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    CUresult r = 0;
    if (!no_init) {
        r = cuInit(0);
        printf("cuInit=%d\n", r);
        if (twice)
            printf("cuInit=%d\n", cuInit(0));
    }
    int v = 0, n = 0;
    CUresult rv = cuDriverGetVersion(&v);
    printf("cuDriverGetVersion=%d version=%d\n", rv, rv ? 0 : v);
    rv = cuDeviceGetCount(&n);
    printf("cuDeviceGetCount=%d count=%d\n", rv, rv ? 0 : n);
    CUdevice dev = -1;
    rv = cuDeviceGet(&dev, ordinal);
    printf("cuDeviceGet=%d device=%d\n", rv, rv ? -1 : dev);
    if (rv)
        return r ? 1 : 0;
    char name[128] = "";
    rv = cuDeviceGetName(name, sizeof name, dev);
    printf("cuDeviceGetName=%d name=%s\n", rv, rv ? "" : name);
    if (ctx) {
        CUcontext c = NULL;
        rv = cuDevicePrimaryCtxRetain(&c, dev);
        printf("cuDevicePrimaryCtxRetain=%d\n", rv);
        if (!rv) {
            printf("cuCtxSetCurrent=%d\n", cuCtxSetCurrent(c));
            if (mem) {
                CUdeviceptr p = 0;
                rv = cuMemAlloc_v2(&p, 1 << 20);
                printf("cuMemAlloc=%d\n", rv);
                if (!rv)
                    printf("cuMemFree=%d\n", cuMemFree_v2(p));
            }
            printf("cuDevicePrimaryCtxRelease=%d\n", cuDevicePrimaryCtxRelease_v2(dev));
        }
    }
    return r ? 1 : 0;
}
