/*
 * rel_errno DIR: call every function the shim hooks, in success and failure,
 * and print what the program sees: return value (fd numbers, NULL/non-NULL),
 * errno, dlerror() text, the mode of a created file.  Before each call errno
 * is set to a sentinel (4242), so a hook that touches errno on a successful
 * call shows.  Run with and without the shim (both on the rig: libfakenv for
 * /dev/nvidia*, the fake libcuda.so.1 on LD_LIBRARY_PATH) the output must be
 * identical, byte for byte.  Every fd is printed, so an fd the shim kept
 * open would show as a different number too.
 *
 * DIR: a scratch directory (files are created there).
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "rel_common.h"

#define SENTINEL 4242

/* the FORTIFY entry points, called directly (glibc exports them) */
extern int __open_2(const char *, int);
extern int __open64_2(const char *, int);
extern int __openat_2(int, const char *, int);
extern int __openat64_2(int, const char *, int);

static void show(const char *what, long ret)
{
	int e = errno;
	printf("%-44s ret=%ld errno=%d%s\n", what, ret, e, e == SENTINEL ? " (kept)" : "");
}

static void showp(const char *what, const void *p)
{
	int e = errno;
	const char *de = dlerror();
	printf("%-44s %s errno=%d%s dlerror=%s\n", what, p ? "non-NULL" : "NULL", e,
	       e == SENTINEL ? " (kept)" : "", de ? de : "(none)");
}

#define CALL(label, expr) do { errno = SENTINEL; long r_ = (long)(expr); show(label, r_); } while (0)
#define CALLP(label, var, expr) do { errno = SENTINEL; var = (expr); showp(label, var); } while (0)

static void closeit(const char *label, int fd)
{
	errno = SENTINEL;
	int r = close(fd);
	show(label, r);
}

static void file_calls(const char *dir)
{
	char p[4096], q[4096];
	struct stat st;
	int fd, dfd;

	snprintf(p, sizeof p, "%s/plain", dir);
	CALL("open(O_CREAT|O_WRONLY, 0640)", fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0640));
	errno = SENTINEL;
	if (fstat(fd, &st) == 0)
		printf("%-44s mode=%o\n", "  created mode", st.st_mode & 07777);
	closeit("close(plain)", fd);
	CALL("open(O_RDONLY)", fd = open(p, O_RDONLY));
	closeit("close", fd);
	CALL("open64(O_RDONLY)", fd = open64(p, O_RDONLY));
	closeit("close", fd);
	CALL("open(missing)", open("/nonexistent-dir/x", O_RDONLY));
	CALL("open(O_CREAT|O_EXCL existing)", open(p, O_CREAT | O_EXCL | O_WRONLY, 0600));
	CALL("openat(AT_FDCWD)", fd = openat(AT_FDCWD, p, O_RDONLY));
	closeit("close", fd);
	CALL("open(dir, O_DIRECTORY)", dfd = open(dir, O_RDONLY | O_DIRECTORY));
	CALL("openat(dirfd, rel)", fd = openat(dfd, "plain", O_RDONLY));
	closeit("close", fd);
	CALL("openat64(dirfd, rel)", fd = openat64(dfd, "plain", O_RDONLY));
	closeit("close", fd);
	CALL("openat(dirfd, O_CREAT 0604)", fd = openat(dfd, "second", O_CREAT | O_RDWR, 0604));
	errno = SENTINEL;
	if (fstat(fd, &st) == 0)
		printf("%-44s mode=%o\n", "  created mode", st.st_mode & 07777);
	closeit("close", fd);
	CALL("openat(bad dirfd)", openat(12345, "plain", O_RDONLY));
	CALL("__open_2", fd = __open_2(p, O_RDONLY));
	closeit("close", fd);
	CALL("__open64_2", fd = __open64_2(p, O_RDONLY));
	closeit("close", fd);
	CALL("__openat_2", fd = __openat_2(dfd, "plain", O_RDONLY));
	closeit("close", fd);
	CALL("__openat64_2", fd = __openat64_2(dfd, "plain", O_RDONLY));
	closeit("close", fd);
	CALL("__open_2(missing)", __open_2("/nonexistent-dir/x", O_RDONLY));
	CALL("__openat_2(missing)", __openat_2(dfd, "nope", O_RDONLY));
	CALL("open(O_TMPFILE, 0600)", fd = open(dir, O_TMPFILE | O_RDWR, 0600));
	if (fd >= 0)
		closeit("close(tmpfile)", fd);
	closeit("close(dirfd)", dfd);
	CALL("close(-1)", close(-1));
	CALL("close(9999)", close(9999));
	CALL("open(/dev/null)", fd = open("/dev/null", O_RDWR));
	{
		int n = -1;
		CALL("ioctl(/dev/null, FIONREAD)", ioctl(fd, FIONREAD, &n));
		struct termios tio;
		CALL("ioctl(/dev/null, TCGETS)", ioctl(fd, TCGETS, &tio));
	}
	closeit("close", fd);
	{
		int pfd[2], n = -1;
		if (pipe(pfd) == 0) {
			if (write(pfd[1], "hello", 5) != 5)
				printf("pipe write failed\n");
			CALL("ioctl(pipe, FIONREAD)", ioctl(pfd[0], FIONREAD, &n));
			printf("%-44s n=%d\n", "  FIONREAD", n);
			closeit("close(pipe r)", pfd[0]);
			closeit("close(pipe w)", pfd[1]);
		}
	}
	CALL("ioctl(-1)", ioctl(-1, FIONREAD, &fd));
	snprintf(q, sizeof q, "%s/plain", dir);
	CALL("open(plain) for ioctl", fd = open(q, O_RDONLY));
	CALL("ioctl(file, TCGETS)", ioctl(fd, TCGETS, &st));
	closeit("close", fd);
}

static void nvidia_calls(void)
{
	struct rel_blk b = { REL_MAGIC, 1, 1, { 0, 0 } };
	int fd, g;

	CALL("open(/dev/nvidiactl)", fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC));
	CALL("ioctl(nvidiactl, unknown escape)", ioctl(fd, REL_REQ(REL_NR), &b));
	CALL("ioctl(nvidiactl, NULL block)", ioctl(fd, REL_REQ(REL_NR), NULL));
	CALL("ioctl(nvidiactl, wild pointer)", ioctl(fd, REL_REQ(REL_NR), (void *)16));
	CALL("ioctl(nvidiactl, non-'F' request)", ioctl(fd, FIONREAD, &g));
	CALL("open64(/dev/nvidia0)", g = open64("/dev/nvidia0", O_RDWR));
	closeit("close(nvidia0)", g);
	CALL("openat(/dev/nvidia-uvm)", g = openat(AT_FDCWD, "/dev/nvidia-uvm", O_RDWR));
	closeit("close(nvidia-uvm)", g);
	CALL("open(/dev/nvidia7 absent)", open("/dev/nvidia7", O_RDWR));
	CALL("__open_2(/dev/nvidiactl)", g = __open_2("/dev/nvidiactl", O_RDWR));
	closeit("close", g);
	closeit("close(nvidiactl)", fd);
	CALL("close(nvidiactl again)", close(fd));
	CALL("ioctl(closed nvidia fd)", ioctl(fd, REL_REQ(REL_NR), &b));
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_ver_fn)(int *);

static void loader_calls(void)
{
	void *h, *m, *c, *p, *n;
	int (*fn)(unsigned);

	errno = SENTINEL;
	(void)dlerror();
	CALLP("dlerror() at start", p, (void *)dlerror());
	CALLP("dlopen(libm.so.6)", m, dlopen("libm.so.6", RTLD_NOW));
	CALLP("dlsym(libm, cos)", p, dlsym(m, "cos"));
	CALLP("dlsym(libm, no_such_symbol)", p, dlsym(m, "no_such_symbol"));
	CALLP("dlvsym(libm, cos, GLIBC_2.2.5)", p, dlvsym(m, "cos", "GLIBC_2.2.5"));
	CALLP("dlvsym(libm, cos, NO_SUCH_VER)", p, dlvsym(m, "cos", "NO_SUCH_VER"));
	CALLP("dlopen(libdoes-not-exist.so)", p, dlopen("libdoes-not-exist.so", RTLD_NOW));
	CALLP("dlopen(NULL)", h, dlopen(NULL, RTLD_NOW));
	CALLP("dlsym(main, printf)", p, dlsym(h, "printf"));
	CALLP("dlsym(RTLD_DEFAULT, cuInit) before", p, dlsym(RTLD_DEFAULT, "cuInit"));
	CALLP("dlsym(RTLD_NEXT, open)", p, dlsym(RTLD_NEXT, "open"));
	CALLP("dlopen(libcudart.so.99 absent)", p, dlopen("libcudart.so.99", RTLD_LAZY));
	CALLP("dlopen(libnvidia-ml.so.1)", n, dlopen("libnvidia-ml.so.1", RTLD_NOW));
	CALLP("dlopen(libcuda.so.1)", c, dlopen("libcuda.so.1", RTLD_NOW));
	CALLP("dlsym(libcuda, cuInit)", p, dlsym(c, "cuInit"));
	if (p) {
		fn = (cu_init_fn)p;
		CALL("cuInit(0)", fn(0));
	}
	CALLP("dlsym(libcuda, cuDriverGetVersion)", p, dlsym(c, "cuDriverGetVersion"));
	if (p) {
		int v = -1;
		CALL("cuDriverGetVersion", ((cu_ver_fn)p)(&v));
		printf("%-44s version=%d\n", "  driver version", v);
	}
	CALLP("dlsym(libcuda, cuNoSuchCall)", p, dlsym(c, "cuNoSuchCall"));
	CALLP("dlvsym(libcuda, cuInit, NOVER)", p, dlvsym(c, "cuInit", "NOVER"));
	CALLP("dlsym(RTLD_DEFAULT, cuInit) after", p, dlsym(RTLD_DEFAULT, "cuInit"));
	CALLP("dlsym(RTLD_DEFAULT, nvmlInit_v2)", p, dlsym(RTLD_DEFAULT, "nvmlInit_v2"));
	CALLP("dlmopen(LM_ID_NEWLM, libm.so.6)", p, dlmopen(LM_ID_NEWLM, "libm.so.6", RTLD_NOW));
	if (p)
		CALL("dlclose(dlmopen handle)", dlclose(p));
	if (n)
		CALL("dlclose(nvml)", dlclose(n));
	if (c)
		CALL("dlclose(libcuda)", dlclose(c));
	CALL("dlclose(libm)", dlclose(m));
	CALL("dlclose(main)", dlclose(h));
	CALLP("dlerror() at end", p, (void *)dlerror());
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rel_errno DIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	file_calls(argv[1]);
	nvidia_calls();
	loader_calls();
	return 0;
}
