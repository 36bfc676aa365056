/*
 * rel_datafd DATA: a daemon-like program whose data file becomes fd 2.  It
 * closes 0-2, opens /dev/null twice (fds 0 and 1), then opens DATA (fd 2),
 * writes a line, opens /dev/nvidiactl and makes a marked ioctl (the shim's
 * first event: the trace file is created here, or fails), writes a second
 * line and exits 0; 3 when DATA did not become fd 2.  With the shim, DATA
 * must be byte-identical to a run without it (RELIABILITY.md, issue 15).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rel_common.h"

static int put(int fd, const char *s)
{
	size_t n = strlen(s);
	return write(fd, s, n) == (ssize_t)n ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct rel_blk b = { REL_MAGIC, 1, 0, { 0, 0 } };
	char line[128];
	int fd, r, e;

	if (argc != 2)
		return 2;
	for (int i = 0; i < 3; i++)
		close(i);
	if (open("/dev/null", O_RDONLY) != 0 || open("/dev/null", O_WRONLY) != 1)
		return 3;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd != 2)
		return 3;
	if (put(fd, "data line 1\n") < 0)
		return 4;
	int nv = open("/dev/nvidiactl", O_RDWR);
	r = ioctl(nv, REL_REQ(REL_NR), &b);
	e = errno;
	if (nv >= 0)
		close(nv);
	snprintf(line, sizeof line, "data line 2: nvidiactl=%d ioctl=%d errno=%d\n", nv >= 0, r, e);
	if (put(fd, line) < 0 || close(fd) < 0)
		return 4;
	return 0;
}
