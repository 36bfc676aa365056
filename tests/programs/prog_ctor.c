/* prog_ctor: main program for libsnip.so (see snip.c).  By the time main
 * runs, the snippet's constructor has already called open/ioctl/dlopen/
 * cuInit; main then uses the same libcuda again.  Lines: "main_NAME=RESULT". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int snip_loaded(void);

typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_count_fn)(int *);

int main(void)
{
    printf("main_snip=%d\n", snip_loaded());
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    printf("main_libcuda_loaded=%s\n", h ? "yes" : "no");
    if (!h)
        return 1;
    cu_init_fn init = (cu_init_fn)dlsym(h, "cuInit");
    cu_count_fn count = (cu_count_fn)dlsym(h, "cuDeviceGetCount");
    int r = init ? init(0) : -1;
    printf("main_cuInit=%d\n", r);
    int n = 0;
    int rc = count ? count(&n) : -1;
    printf("main_cuDeviceGetCount=%d count=%d\n", rc, rc ? 0 : n);
    return r ? 1 : 0;
}
