/*
 * rel_secure: linked against libcutrace.so (DT_NEEDED, absolute RUNPATH),
 * because the loader ignores LD_PRELOAD paths in a secure-execution
 * (AT_SECURE) process.  It prints AT_SECURE and makes calls the shim would
 * trace: an open of /dev/nvidiactl and a dlopen of libcuda.so.1.  Run as a
 * setuid copy (owner nobody) by root, the shim must stay inert: no trace,
 * nothing on stderr.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

int main(void)
{
	int fd = open("/dev/nvidiactl", O_RDWR);
	int e = errno;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);

	printf("AT_SECURE=%lu euid_differs=%d\n", getauxval(AT_SECURE), geteuid() != getuid());
	printf("open=%d errno=%d dlopen=%s\n", fd < 0 ? -1 : 0, fd < 0 ? e : 0, h ? "ok" : "NULL");
	return 0;
}
