/*
 * rel_mt: a multi-threaded program for the behaviour battery.  Eight threads
 * each compute a checksum, read a file with stdio, call into a dlopen()ed
 * libm, and (with the rig) open /dev/nvidiactl, make a marked ioctl and close
 * it; the main thread joins them in order and prints one line per thread.
 * The output depends only on the inputs, so runs with and without the shim
 * must print the same bytes.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rel_common.h"

#define NT 8

struct res {
	unsigned long long sum;
	int lines, nv_open, nv_ioctl, nv_errno;
	double c;
};

static struct res res[NT];

static void *work(void *arg)
{
	int t = (int)(intptr_t)arg;
	struct res *r = &res[t];
	char line[512];
	FILE *f;

	for (unsigned long long i = 0; i < 200000; i++)
		r->sum = r->sum * 6364136223846793005ull + i + (unsigned long long)t;
	f = fopen("/etc/passwd", "r");
	while (f && fgets(line, sizeof line, f))
		r->lines++;
	if (f)
		fclose(f);
	void *m = dlopen("libm.so.6", RTLD_NOW);
	double (*cosp)(double) = m ? (double (*)(double))dlsym(m, "cos") : NULL;
	r->c = cosp ? cosp(t) : -2;
	if (m)
		dlclose(m);
	int fd = open("/dev/nvidiactl", O_RDWR);
	r->nv_open = fd >= 0;
	if (fd >= 0) {
		struct rel_blk b = { REL_MAGIC, (uint32_t)t, 0, { 0, 0 } };
		r->nv_ioctl = ioctl(fd, REL_REQ(REL_NR), &b);
		r->nv_errno = errno;
		close(fd);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[NT];

	for (int i = 0; i < NT; i++)
		if (pthread_create(&th[i], NULL, work, (void *)(intptr_t)i))
			return 2;
	for (int i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		printf("thread %d: sum=%016llx lines=%d cos=%.6f nvidiactl=%d ioctl=%d errno=%d\n", i,
		       res[i].sum, res[i].lines, res[i].c, res[i].nv_open, res[i].nv_ioctl,
		       res[i].nv_open ? res[i].nv_errno : 0);
	}
	return 0;
}
