/*
 * librel_fakedev.so: a minimal, lock-free fake of /dev/nvidiactl for the
 * signal and fork tests (preload it after the shim).  The rig's libfakenv
 * serialises every call with a mutex, so calling it from a signal handler
 * that interrupted it would deadlock -- a limit of the double, not of the
 * shim, whose hooks the tests exercise.  Here:
 *   open*("/dev/nvidiactl")  -> a real fd on /dev/null, remembered in a bitmap
 *   ioctl on such an fd      -> -1/EINVAL ("unknown escape"), block untouched
 *   close of such an fd      -> forgotten, then closed
 * Everything is a raw system call or an atomic: async-signal-safe.  Other
 * paths and fds go to the next definitions, resolved in the constructor.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FD_MAX 4096
#define EXPORT __attribute__((visibility("default")))

static unsigned long fds[FD_MAX / (8 * sizeof(unsigned long))];
static int (*next_open)(const char *, int, ...);
static int (*next_openat)(int, const char *, int, ...);
static int (*next_close)(int);
static int (*next_ioctl)(int, unsigned long, ...);

__attribute__((constructor)) static void init(void)
{
	next_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	next_openat = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	next_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	next_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
}

static int is_fake(int fd)
{
	return fd >= 0 && fd < FD_MAX &&
	       (__atomic_load_n(&fds[fd / (8 * sizeof(unsigned long))], __ATOMIC_ACQUIRE) >>
		(fd % (8 * sizeof(unsigned long)))) & 1;
}

static void mark(int fd, int on)
{
	unsigned long bit = 1ul << (fd % (8 * sizeof(unsigned long)));
	if (fd < 0 || fd >= FD_MAX)
		return;
	if (on)
		__atomic_fetch_or(&fds[fd / (8 * sizeof(unsigned long))], bit, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&fds[fd / (8 * sizeof(unsigned long))], ~bit, __ATOMIC_RELEASE);
}

static int fake_open(const char *path, int flags)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", (flags & O_CLOEXEC) | O_RDWR, 0);
	if (fd >= 0)
		mark(fd, 1);
	return fd;
	(void)path;
}

static int ours(const char *p)
{
	return p && !strcmp(p, "/dev/nvidiactl");
}

EXPORT int open(const char *p, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int mode = va_arg(ap, int);
	va_end(ap);
	return ours(p) ? fake_open(p, flags) : next_open(p, flags, mode);
}
EXPORT int open64(const char *p, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int mode = va_arg(ap, int);
	va_end(ap);
	return ours(p) ? fake_open(p, flags) : next_open(p, flags | O_LARGEFILE, mode);
}
EXPORT int openat(int d, const char *p, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int mode = va_arg(ap, int);
	va_end(ap);
	return ours(p) ? fake_open(p, flags) : next_openat(d, p, flags, mode);
}
EXPORT int openat64(int d, const char *p, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int mode = va_arg(ap, int);
	va_end(ap);
	return ours(p) ? fake_open(p, flags) : next_openat(d, p, flags | O_LARGEFILE, mode);
}
EXPORT int close(int fd)
{
	if (is_fake(fd))
		mark(fd, 0);
	return next_close ? next_close(fd) : (int)syscall(SYS_close, fd);
}
EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (is_fake(fd)) {
		errno = EINVAL;
		return -1;
	}
	return next_ioctl(fd, req, arg);
}
