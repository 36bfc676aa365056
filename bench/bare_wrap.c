/*
 * libbench_bare.so: the reference point for the pass-through benchmark.
 *
 * The least an LD_PRELOAD wrapper can do: forward ioctl, open and close to
 * the next definition through a pointer cached at load time, with nothing
 * else on the path.  Written the portable way most wrappers are (variadic
 * prototypes, va_arg for the optional argument), so its instruction count is
 * what "a wrapper that does nothing" costs; the shim's pass-through is
 * measured against it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BW_EXPORT __attribute__((visibility("default")))

static int (*next_ioctl)(int, unsigned long, ...);
static int (*next_open)(const char *, int, ...);
static int (*next_close)(int);

__attribute__((constructor)) static void bw_resolve(void)
{
	next_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	next_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	next_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
}

BW_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (__builtin_expect(!next_ioctl, 0))
		return (int)syscall(SYS_ioctl, fd, req, arg); /* before the constructor */
	return next_ioctl(fd, req, arg);
}

BW_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (__builtin_expect(!next_open, 0))
		return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
	return next_open(path, flags, mode);
}

BW_EXPORT int close(int fd)
{
	if (__builtin_expect(!next_close, 0))
		return (int)syscall(SYS_close, fd);
	return next_close(fd);
}
