/*
 * rel_closefds OUT: a program that closes every file descriptor, as daemons
 * and some launchers do, and then keeps working.  It opens /dev/nvidiactl,
 * makes a marked ioctl, closes every fd from 0 to the soft RLIMIT_NOFILE
 * (capped at 65536) with close(), then the rest with close_range(), then
 * opens OUT (it becomes fd 0) and writes there what it sees when it opens
 * /dev/nvidiactl again, makes another ioctl and reads /etc/hostname-like
 * files.  The shim must keep tracing (its trace file is mapped, not an fd).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rel_common.h"

int main(int argc, char **argv)
{
	struct rel_blk b = { REL_MAGIC, 0, 0, { 0, 0 } };
	struct rlimit rl;
	char buf[256];
	int fd, r1, e1, r2, e2, fd2, out;
	long closed = 0;

	if (argc != 2)
		return 2;
	fd = open("/dev/nvidiactl", O_RDWR);
	r1 = ioctl(fd, REL_REQ(REL_NR), &b);
	e1 = errno;
	printf("first: fd=%d ioctl=%d errno=%d\n", fd, r1, e1);
	fflush(stdout);
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 65536)
		rl.rlim_cur = 65536;
	for (int i = 0; i < (int)rl.rlim_cur; i++)
		if (close(i) == 0)
			closed++;
#ifdef SYS_close_range
	syscall(SYS_close_range, 3u, ~0u, 0u);
#endif
	out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		return 3;
	fd2 = open("/dev/nvidiactl", O_RDWR);
	b.seq = 1;
	r2 = ioctl(fd2, REL_REQ(REL_NR), &b);
	e2 = errno;
	int n = snprintf(buf, sizeof buf, "out=%d closed>=3:%d second: fd=%d ioctl=%d errno=%d\n", out,
			 closed >= 3, fd2, r2, e2);
	if (write(out, buf, (size_t)n) != n)
		return 4;
	fd = open("/etc/passwd", O_RDONLY);
	n = (int)read(fd, buf, 16);
	n = snprintf(buf + 100, 100, "passwd fd=%d read=%d\n", fd, n);
	if (write(out, buf + 100, (size_t)n) != n)
		return 4;
	return 0;
}
