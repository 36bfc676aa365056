/*
 * libbench_fakenode.so: the smallest possible NVIDIA "kernel" for the
 * recording benchmarks.  Bench-only: tests/rig/fakenv.c is the faithful one.
 *
 * Preload it AFTER the shim:  LD_PRELOAD="libcutrace.so libbench_fakenode.so".
 * The shim finds its real open/ioctl/close with RTLD_NEXT, i.e. here, so the
 * shim records exactly as on a GPU machine while the "driver" costs (almost)
 * nothing; the raw run preloads this library alone.  The difference between
 * the two runs is the shim's recording cost and nothing else.
 *
 *   open/open64/openat/openat64 of /dev/nvidia*   a real fd on /dev/null,
 *                                                 remembered as fake
 *   ioctl on a fake fd                            returns 0 in user space
 *   close of a fake fd                            forgets it, closes it
 *   anything else                                 the raw system call
 *
 * Modes (environment, read on first use):
 *   FAKENODE_SYSCALL=1  an ioctl on a fake fd still enters the kernel (an
 *                       ioctl on /dev/null, ENOTTY, ignored) and returns 0:
 *                       the loop strace is measured on, since strace can
 *                       only see calls that reach the kernel.
 *   FAKENODE_NULL=1     every open returns fd NULL_FD without a system call,
 *                       every ioctl returns 0, close(NULL_FD) returns 0:
 *                       isolates the shim's pass-through wrapper cost from the
 *                       system call it wraps (used for the strace ratio).
 *
 * Everything goes through syscall(2), never dlsym: this library must not
 * depend on the shim's dlsym hook it is measuring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FN_EXPORT __attribute__((visibility("default")))
#define FN_MAX_FDS 4096
#define NULL_FD 1000

enum { M_UNSET, M_USER, M_SYSCALL, M_NULL };

static unsigned char fake_fd[FN_MAX_FDS];
static int fn_mode = M_UNSET;

static int mode(void)
{
	if (__builtin_expect(fn_mode == M_UNSET, 0)) {
		const char *s = getenv("FAKENODE_SYSCALL");
		const char *n = getenv("FAKENODE_NULL");
		fn_mode = (n && *n == '1') ? M_NULL : (s && *s == '1') ? M_SYSCALL : M_USER;
	}
	return fn_mode;
}

static int is_nv(const char *p)
{
	return p && !strncmp(p, "/dev/nvidia", 11);
}

static int fn_open(int dirfd, const char *path, int flags, mode_t m)
{
	int fd;

	if (mode() == M_NULL)
		return NULL_FD;
	if (!is_nv(path))
		return (int)syscall(SYS_openat, dirfd, path, flags, m);
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | (flags & O_CLOEXEC));
	if (fd >= 0 && fd < FN_MAX_FDS)
		fake_fd[fd] = 1;
	return fd;
}

static int has_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define MODE_ARG(last)                               \
	mode_t m = 0;                                \
	if (has_mode(flags)) {                       \
		va_list ap;                          \
		va_start(ap, last);                  \
		m = (mode_t)va_arg(ap, int);         \
		va_end(ap);                          \
	}

FN_EXPORT int open(const char *path, int flags, ...)
{
	MODE_ARG(flags)
	return fn_open(AT_FDCWD, path, flags, m);
}

FN_EXPORT int open64(const char *path, int flags, ...)
{
	MODE_ARG(flags)
	return fn_open(AT_FDCWD, path, flags, m);
}

FN_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags)
	return fn_open(dirfd, path, flags, m);
}

FN_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	MODE_ARG(flags)
	return fn_open(dirfd, path, flags, m);
}

FN_EXPORT int close(int fd)
{
	if (mode() == M_NULL && fd == NULL_FD)
		return 0;
	if (fd >= 0 && fd < FN_MAX_FDS)
		fake_fd[fd] = 0;
	return (int)syscall(SYS_close, fd);
}

FN_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	switch (mode()) {
	case M_NULL:
		return 0;
	case M_SYSCALL:
		if (fd >= 0 && fd < FN_MAX_FDS && fake_fd[fd]) {
			int e = errno;
			syscall(SYS_ioctl, fd, req, arg); /* ENOTTY on /dev/null */
			errno = e;
			return 0;
		}
		break;
	default:
		if (fd >= 0 && fd < FN_MAX_FDS && fake_fd[fd])
			return 0;
	}
	return (int)syscall(SYS_ioctl, fd, req, arg);
}
