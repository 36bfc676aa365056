/*
 * libfakewsl.so: the WSL2 side of the GPU-less rig (failure catalog G3), a
 * test double documented as such: preloaded after the shim (and libfakenv),
 *   - uname() reports the release FAKEWSL_RELEASE (default
 *     "5.15.167.4-microsoft-standard-WSL2", the form WSL2 kernels have);
 *   - open of /dev/dxg gives a real fd (on /dev/null) that it remembers,
 *     as if WSL's dxgkrnl node were there (FAKEWSL_NO_DXG=1: ENOENT);
 *   - ioctls on that fd answer 0, or -1 with FAKEWSL_DXG_ERRNO=nr=ERRNO
 *     (nr the ioctl number, 0x14 = LX_DXENUMADAPTERS2; ERRNO a number or
 *     EINVAL/EIO/ENODEV).
 * The fake WSL libraries are files at a .../usr/lib/wsl/lib/ path under a
 * temporary directory (tests/integration/it_runtime.py): cutrace tells the
 * WSL driver's libcuda by that path.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define FW_EXPORT __attribute__((visibility("default")))
#define FW_MAX_FD 1024

static unsigned char fw_dxg[FW_MAX_FD];

static int fw_errno_of(const char *s)
{
    if (!strcmp(s, "EINVAL"))
        return EINVAL;
    if (!strcmp(s, "EIO"))
        return EIO;
    if (!strcmp(s, "ENODEV"))
        return ENODEV;
    return atoi(s);
}

static int fw_is_dxg(const char *path)
{
    return path != NULL && !strcmp(path, "/dev/dxg");
}

static int fw_open_dxg(const char *path)
{
    int (*next)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    int fd;

    if (getenv("FAKEWSL_NO_DXG")) {
        errno = ENOENT;
        return -1;
    }
    (void)path;
    fd = next ? next("/dev/null", O_RDWR | O_CLOEXEC) : -1;
    if (fd >= 0 && fd < FW_MAX_FD)
        fw_dxg[fd] = 1;
    return fd;
}

#define FW_OPEN(NAME, ...)                                                                                   \
    FW_EXPORT int NAME(const char *path, int flags, ...)                                                     \
    {                                                                                                        \
        int (*next)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #NAME);      \
        mode_t mode = 0;                                                                                     \
        va_list ap;                                                                                          \
        va_start(ap, flags);                                                                                 \
        if (flags & (O_CREAT | __O_TMPFILE))                                                                 \
            mode = va_arg(ap, mode_t);                                                                       \
        va_end(ap);                                                                                          \
        if (fw_is_dxg(path))                                                                                 \
            return fw_open_dxg(path);                                                                        \
        return next ? next(path, flags, mode) : (errno = ENOSYS, -1);                                        \
    }
FW_OPEN(open)
FW_OPEN(open64)

#define FW_OPENAT(NAME)                                                                                      \
    FW_EXPORT int NAME(int dirfd, const char *path, int flags, ...)                                          \
    {                                                                                                        \
        int (*next)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT,    \
                                                                                               #NAME);       \
        mode_t mode = 0;                                                                                     \
        va_list ap;                                                                                          \
        va_start(ap, flags);                                                                                 \
        if (flags & (O_CREAT | __O_TMPFILE))                                                                 \
            mode = va_arg(ap, mode_t);                                                                       \
        va_end(ap);                                                                                          \
        if (fw_is_dxg(path))                                                                                 \
            return fw_open_dxg(path);                                                                        \
        return next ? next(dirfd, path, flags, mode) : (errno = ENOSYS, -1);                                 \
    }
FW_OPENAT(openat)
FW_OPENAT(openat64)

FW_EXPORT int close(int fd)
{
    int (*next)(int) = (int (*)(int))dlsym(RTLD_NEXT, "close");

    if (fd >= 0 && fd < FW_MAX_FD)
        fw_dxg[fd] = 0;
    return next ? next(fd) : 0;
}

FW_EXPORT int ioctl(int fd, unsigned long req, ...)
{
    int (*next)(int, unsigned long, void *) = (int (*)(int, unsigned long, void *))dlsym(RTLD_NEXT, "ioctl");
    const char *e = getenv("FAKEWSL_DXG_ERRNO");
    va_list ap;
    void *arg;

    va_start(ap, req);
    arg = va_arg(ap, void *);
    va_end(ap);
    if (fd < 0 || fd >= FW_MAX_FD || !fw_dxg[fd])
        return next ? next(fd, req, arg) : (errno = ENOSYS, -1);
    if (e) {
        const char *eq = strchr(e, '=');
        if (eq && strtoul(e, NULL, 0) == (req & 0xff)) {
            errno = fw_errno_of(eq + 1);
            return -1;
        }
    }
    return 0;
}

FW_EXPORT int uname(struct utsname *u)
{
    int (*next)(struct utsname *) = (int (*)(struct utsname *))dlsym(RTLD_NEXT, "uname");
    const char *rel = getenv("FAKEWSL_RELEASE");
    int r = next ? next(u) : -1;

    if (r == 0) {
        strncpy(u->release, rel ? rel : "5.15.167.4-microsoft-standard-WSL2", sizeof u->release - 1);
        u->release[sizeof u->release - 1] = 0;
    }
    return r;
}
