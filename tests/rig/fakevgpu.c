/*
 * A stand-in for a GPU-sharing interposer (failure catalog G5): HAMi-core's
 * libvgpu.so is preloaded into the container's programs and answers CUDA
 * calls itself when its limits or its device list refuse, so the program
 * sees a bare 100 or 999 that no driver call produced (Project-HAMi/HAMi#1202).
 * This one answers cuInit with FAKEVGPU_CUINIT (default 100) without calling
 * the driver, or with FAKEVGPU_CUINIT=pass calls the next cuInit (the
 * driver's).  Built as interposer/libvgpu.so; preloaded after the shim.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

__attribute__((visibility("default"))) int cuInit(unsigned flags);
int cuInit(unsigned flags)
{
    const char *v = getenv("FAKEVGPU_CUINIT");

    if (v && !strcmp(v, "pass")) {
        int (*next)(unsigned) = (int (*)(unsigned))dlsym(RTLD_NEXT, "cuInit");
        return next ? next(flags) : 999;
    }
    return v ? atoi(v) : 100;
}
