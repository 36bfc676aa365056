/* fakepci: makes the real libcuda believe an NVIDIA GPU sits on the PCI bus
 * of a machine without one, and finds its setuid helper, so that a test can
 * watch what it does when the kernel module is missing (tests/real/
 * verdicts.sh, no_module_helper).  Preloaded after libcutrace.so.
 *
 *   FAKEPCI_DEV=0000:00:04.0    the device whose config space is replaced
 *   FAKEPCI_CONFIG=FILE         the config space to read instead (vendor
 *                               0x10de, class 0x0302: a 3D controller)
 *   FAKEPCI_MODPROBE=FILE       what /usr/bin/nvidia-modprobe is: its stat
 *                               and its exec go to FILE
 *   FAKEPCI_SBIN_MODPROBE=FILE  the same for /sbin/modprobe, which libcuda
 *                               runs itself as root ("modprobe nvidia")
 *
 * What libcuda 535.309.01 does (strace, on this kind of machine): it reads
 * /sys/bus/pci/devices/<dev>/config of every device, and as an ordinary user
 * with an NVIDIA device and no module it stats /usr/bin/nvidia-modprobe,
 * forks, execle()s it and waitpid()s, 11 times in one cuInit; as root it
 * runs "/sbin/modprobe nvidia" the same way (waitpid with a NULL status). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fix(const char *p)
{
	const char *dev = getenv("FAKEPCI_DEV"), *cfg = getenv("FAKEPCI_CONFIG"),
		   *mp = getenv("FAKEPCI_MODPROBE"), *smp = getenv("FAKEPCI_SBIN_MODPROBE");
	static const char pre[] = "/sys/bus/pci/devices/";
	size_t n = sizeof pre - 1;

	if (!p)
		return p;
	if (mp && !strcmp(p, "/usr/bin/nvidia-modprobe"))
		return mp;
	if (smp && !strcmp(p, "/sbin/modprobe"))
		return smp;
	if (dev && cfg && !strncmp(p, pre, n) && !strncmp(p + n, dev, strlen(dev)) &&
	    !strcmp(p + n + strlen(dev), "/config"))
		return cfg;
	return p;
}

static int mode_of(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;
}

#define OPEN_LIKE(name)                                                                                      \
	int name(const char *p, int flags, ...)                                                              \
	{                                                                                                    \
		static int (*next)(const char *, int, ...);                                                  \
		va_list ap;                                                                                  \
		int m;                                                                                       \
		va_start(ap, flags);                                                                         \
		m = mode_of(flags, ap);                                                                      \
		va_end(ap);                                                                                  \
		if (!next)                                                                                   \
			next = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name);                     \
		return next(fix(p), flags, m);                                                               \
	}
OPEN_LIKE(open)
OPEN_LIKE(open64)

/* asm names: glibc's headers declare these with other types, or not at all */
int fp_xstat(int ver, const char *p, void *st) __asm__("__xstat");
int fp_xstat64(int ver, const char *p, void *st) __asm__("__xstat64");
int fp_stat(const char *p, void *st) __asm__("stat");
int fp_stat64(const char *p, void *st) __asm__("stat64");

int fp_xstat(int ver, const char *p, void *st)
{
	(void)ver;
	return fstatat(AT_FDCWD, fix(p), st, 0);
}

int fp_xstat64(int ver, const char *p, void *st)
{
	(void)ver;
	return fstatat(AT_FDCWD, fix(p), st, 0);
}

int fp_stat(const char *p, void *st)
{
	return fstatat(AT_FDCWD, fix(p), st, 0);
}

int fp_stat64(const char *p, void *st)
{
	return fstatat(AT_FDCWD, fix(p), st, 0);
}

int execve(const char *p, char *const argv[], char *const envp[])
{
	static int (*next)(const char *, char *const[], char *const[]);

	if (!next)
		next = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
	return next(fix(p), argv, envp);
}
