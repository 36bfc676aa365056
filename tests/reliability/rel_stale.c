/*
 * rel_stale: ioctl parameter blocks in memory that was readable once and is
 * not any more.  The kernel answers such a call with EFAULT (copy_from_user);
 * the program goes on.  A tracer that remembers "this page was readable" and
 * copies from it later would crash the program instead.
 *   1. a block in an mmap()ed page: ioctl; munmap the page; ioctl again with
 *      the same pointer;
 *   2. the same with mprotect(PROT_NONE) instead of munmap.
 * Prints each result; with and without the shim the output must be the same.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rel_common.h"

static void call(int fd, const char *what, void *p)
{
	int r = ioctl(fd, REL_REQ(REL_NR), p);
	printf("%-40s ret=%d errno=%d\n", what, r, r < 0 ? errno : 0);
	fflush(stdout);
}

int main(void)
{
	int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	struct rel_blk b = { REL_MAGIC, 7, 0, { 0, 0 } };

	if (fd < 0) {
		perror("/dev/nvidiactl");
		return 2;
	}
	for (int pass = 0; pass < 2; pass++) {
		unsigned char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 2;
		memcpy(p + 100, &b, sizeof b);
		call(fd, "block in a mapped page", p + 100);
		if (pass == 0) {
			munmap(p, 8192);
			call(fd, "same pointer after munmap", p + 100);
		} else {
			mprotect(p, 8192, PROT_NONE);
			call(fd, "same pointer after mprotect(PROT_NONE)", p + 100);
			munmap(p, 8192);
		}
	}
	close(fd);
	printf("rel_stale done\n");
	return 0;
}
