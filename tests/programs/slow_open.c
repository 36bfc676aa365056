/* libslowopen.so: an LD_PRELOAD library placed after libcutrace.so (and
 * before the fake kernel) whose open of one path hangs, the way an open of
 * /dev/nvidia-uvm hangs behind a stuck module load.  The shim calls it as
 * "the real open": a test kills the process while it sleeps and checks the
 * trace shows the open entered and never returned.
 *   SLOWOPEN_PATH=path   the path whose open sleeps (default /dev/nvidia-uvm)
 *   SLOWOPEN_SEC=s       how long (default 30)
 * Every other open, and the open after the sleep, goes to the next library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

static void maybe_sleep(const char *path)
{
    const char *want = getenv("SLOWOPEN_PATH"), *sec = getenv("SLOWOPEN_SEC");
    struct timespec ts = { sec && *sec ? atoi(sec) : 30, 0 };

    if (!want || !*want)
        want = "/dev/nvidia-uvm";
    if (path && !strcmp(path, want))
        while (nanosleep(&ts, &ts) != 0)
            ;
}

static mode_t mode_of(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

#define OPEN_HOOK(name)                                                      \
    EXPORT int name(const char *path, int flags, ...)                        \
    {                                                                        \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode_t mode = mode_of(flags, ap);                                    \
        va_end(ap);                                                          \
        maybe_sleep(path);                                                   \
        open_fn next = (open_fn)dlsym(RTLD_NEXT, #name);                     \
        return next(path, flags, mode);                                      \
    }
#define OPENAT_HOOK(name)                                                    \
    EXPORT int name(int dirfd, const char *path, int flags, ...)             \
    {                                                                        \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode_t mode = mode_of(flags, ap);                                    \
        va_end(ap);                                                          \
        maybe_sleep(path);                                                   \
        openat_fn next = (openat_fn)dlsym(RTLD_NEXT, #name);                 \
        return next(dirfd, path, flags, mode);                               \
    }

OPEN_HOOK(open)
OPEN_HOOK(open64)
OPENAT_HOOK(openat)
OPENAT_HOOK(openat64)
