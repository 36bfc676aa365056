/* libsnip.so: a library whose constructor reaches the driver before any
 * other constructor in the process has run -- in particular before the
 * preloaded shim's and fake kernel's own constructors (DT_NEEDED libraries
 * are initialised before LD_PRELOAD ones).  The idea is libfaketime's
 * "library constructors" test snippets.  Lines printed: "snip_NAME=RESULT". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

typedef int (*cu_init_fn)(unsigned int);

__attribute__((constructor)) static void snip_early(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    printf("snip_open=%s\n", fd >= 0 ? "ok" : "failed");
    if (fd >= 0) {
        unsigned long long memblock = 0x40000000ull;
        /* _IOWR('F', 214 = NV_ESC_SYS_PARAMS, 8) */
        int r = ioctl(fd, (3ul << 30) | (8ul << 16) | (0x46ul << 8) | 214ul, &memblock);
        printf("snip_SYS_PARAMS=%d\n", r);
        close(fd);
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        printf("snip_dlopen=failed\n");
        return;
    }
    cu_init_fn init = (cu_init_fn)dlsym(h, "cuInit");
    printf("snip_cuInit=%d\n", init ? init(0) : -1);
}

/* Lets the program prove the library is linked and initialised. */
int snip_loaded(void)
{
    return 1;
}
