/* libinterposer.so: another dl* interposer, in the style of HAMi-core's
 * libvgpu.so: unversioned dlopen and dlsym of its own, the real ones found
 * with dlvsym(RTLD_NEXT, ..., base version), and a wrapper of its own handed
 * out for one CUDA name (cuDeviceGetCount).  It counts what it sees and, at
 * exit, appends one line to $INTERPOSER_OUT:
 *   dlopen=N dlsym=N wrapped_calls=N
 * (dlopen: calls naming a libcuda/libnvidia-ml file; dlsym: look-ups of a cu*
 * or nvml* name; wrapped_calls: calls through its cuDeviceGetCount wrapper).
 * tests/integration/it_interpose.py preloads it before and after the shim and
 * without it: the counts must not change. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#if defined(__aarch64__)
#define BASE_VERSION "GLIBC_2.17"
#else
#define BASE_VERSION "GLIBC_2.2.5"
#endif
/* dlvsym at the version every glibc has (libdl's before 2.34), so that the
 * same file loads in the Debian 11 root (tests/portability/interposer.sh) */
__asm__(".symver dlvsym,dlvsym@" BASE_VERSION);

static void *(*real_dlopen)(const char *, int);
static void *(*real_dlsym)(void *, const char *);
static int (*real_count)(int *);
static unsigned n_dlopen, n_dlsym, n_calls;

static void init(void)
{
    if (!real_dlsym)
        real_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", BASE_VERSION);
    if (!real_dlopen)
        real_dlopen = (void *(*)(const char *, int))dlvsym(RTLD_NEXT, "dlopen", BASE_VERSION);
}

static int my_cuDeviceGetCount(int *n)
{
    __atomic_fetch_add(&n_calls, 1, __ATOMIC_RELAXED);
    return real_count ? real_count(n) : 3; /* CUDA_ERROR_NOT_INITIALIZED */
}

EXPORT void *dlopen(const char *file, int flags)
{
    init();
    if (file && (strstr(file, "libcuda") || strstr(file, "libnvidia-ml")))
        __atomic_fetch_add(&n_dlopen, 1, __ATOMIC_RELAXED);
    return real_dlopen(file, flags);
}

EXPORT void *dlsym(void *h, const char *name)
{
    void *p;

    init();
    if ((!strncmp(name, "cu", 2) || !strncmp(name, "nvml", 4)))
        __atomic_fetch_add(&n_dlsym, 1, __ATOMIC_RELAXED);
    /* RTLD_NEXT is relative to the caller: a sibling call keeps it (the
	 * recursion of HAMi-core PR #326 otherwise) */
    if (h == RTLD_NEXT)
        return real_dlsym(h, name);
    p = real_dlsym(h, name);
    if (p && !strcmp(name, "cuDeviceGetCount")) {
        real_count = (int (*)(int *))p;
        return (void *)my_cuDeviceGetCount;
    }
    return p;
}

__attribute__((destructor)) static void report(void)
{
    const char *out = getenv("INTERPOSER_OUT");
    char line[128];
    int fd, n;

    if (!out || !*out)
        return;
    n = snprintf(line, sizeof line, "dlopen=%u dlsym=%u wrapped_calls=%u\n", n_dlopen, n_dlsym, n_calls);
    fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
        if (write(fd, line, (size_t)n) != n)
            n = -1;
        close(fd);
    }
}
