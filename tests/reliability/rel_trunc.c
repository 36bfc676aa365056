/*
 * rel_trunc MODE DIR ITERS HANDLER: 8 threads x ITERS rounds of open
 * /dev/nvidiactl + a marked ioctl + close; once every thread has done a
 * quarter of its rounds, the main thread does MODE to every *.cutrace file
 * in DIR (none without the shim) while they go on:
 *   none       nothing
 *   zero       truncate to 0 bytes
 *   copytrunc  copy the file to FILE.1, then truncate it to 0 (logrotate)
 *   shrink     truncate to 8192 bytes (the header page stays)
 *   replace    a new file renamed over it
 *   regrow     truncate to 0, then back to its size (holes)
 * HANDLER: none; early / late: the program's own SIGBUS handler (SA_SIGINFO)
 * installed before the first CUDA call / after the truncation, signal: the
 * same with signal() after the truncation; each then checks what
 * sigaction(SIGBUS) reports and provokes a SIGBUS of its own (a truncated
 * mapping of its own file), which its handler must get, at that address;
 * dfl: at the end, that SIGBUS with the default action (killed, 135).
 * Prints the counts; the output and status must not depend on the shim.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rel_common.h"

#define NTHREADS 8
static long iters;
static int progress[NTHREADS];
static long einval[NTHREADS], other[NTHREADS];

static void *worker(void *arg)
{
	int t = (int)(long)arg;

	for (long i = 0; i < iters; i++) {
		struct rel_blk b = { REL_MAGIC, (uint32_t)t, (uint64_t)i, { 0, 0 } };
		int fd = open("/dev/nvidiactl", O_RDWR);
		int r = ioctl(fd, REL_REQ(REL_NR), &b);
		if (r < 0 && errno == EINVAL)
			einval[t]++;
		else
			other[t]++;
		if (fd >= 0)
			close(fd);
		if (i == iters / 4)
			__atomic_store_n(&progress[t], 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&progress[t], 1, __ATOMIC_RELEASE);
	return NULL;
}

static void do_mode(const char *mode, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096], path2[4200];

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		struct stat st;
		if (n < 8 || strcmp(e->d_name + n - 8, ".cutrace"))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (stat(path, &st) < 0)
			continue;
		if (!strcmp(mode, "zero")) {
			truncate(path, 0);
		} else if (!strcmp(mode, "shrink")) {
			truncate(path, 8192);
		} else if (!strcmp(mode, "regrow")) {
			truncate(path, 0);
			truncate(path, st.st_size);
		} else if (!strcmp(mode, "copytrunc")) {
			char buf[65536];
			ssize_t k;
			int in = open(path, O_RDONLY), out;
			snprintf(path2, sizeof path2, "%s.1", path);
			out = open(path2, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			while (in >= 0 && out >= 0 && (k = read(in, buf, sizeof buf)) > 0)
				if (write(out, buf, (size_t)k) != k)
					break;
			if (in >= 0)
				close(in);
			if (out >= 0)
				close(out);
			truncate(path, 0);
		} else if (!strcmp(mode, "replace")) {
			snprintf(path2, sizeof path2, "%s.new", path);
			int fd = open(path2, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0 && write(fd, "replaced\n", 9) == 9 && close(fd) == 0)
				rename(path2, path);
		}
	}
	closedir(d);
}

static sigjmp_buf jb;
static void *own_addr;
static volatile sig_atomic_t own_hits, own_at;

static void own_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	own_hits++;
	own_at = sig == SIGBUS && si->si_addr == own_addr;
	siglongjmp(jb, 1);
}

static void own_plain(int sig)
{
	own_hits++;
	own_at = sig == SIGBUS;
	siglongjmp(jb, 1);
}

static void install(const char *how)
{
	if (!strcmp(how, "signal")) {
		signal(SIGBUS, own_plain);
	} else {
		struct sigaction a;
		memset(&a, 0, sizeof a);
		a.sa_sigaction = own_handler;
		a.sa_flags = SA_SIGINFO;
		sigemptyset(&a.sa_mask);
		sigaction(SIGBUS, &a, NULL);
	}
}

/* a SIGBUS of the program's own: its file, mapped, truncated, touched */
static int own_sigbus(const char *dir)
{
	char path[4096];
	int fd;
	volatile char *p;

	snprintf(path, sizeof path, "%s/own.data", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return -1;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	own_addr = (void *)p;
	if (ftruncate(fd, 0) < 0)
		return -1;
	close(fd);
	unlink(path);
	if (sigsetjmp(jb, 1) == 0)
		p[0] = 1;
	munmap((void *)p, 4096);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t th[NTHREADS];
	const char *mode, *dir, *handler;
	long ein = 0, oth = 0;
	int fd;

	if (argc != 5)
		return 2;
	mode = argv[1];
	dir = argv[2];
	iters = atol(argv[3]);
	handler = argv[4];
	if (!strcmp(handler, "early"))
		install("sigaction");
	fd = open("/dev/nvidiactl", O_RDWR); /* the trace file exists from here */
	if (fd >= 0)
		close(fd);
	for (long t = 0; t < NTHREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t))
			return 3;
	for (int t = 0; t < NTHREADS; t++)
		while (!__atomic_load_n(&progress[t], __ATOMIC_ACQUIRE))
			usleep(200);
	do_mode(mode, dir);
	if (!strcmp(handler, "late") || !strcmp(handler, "signal"))
		install(handler);
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(th[t], NULL);
		ein += einval[t];
		oth += other[t];
	}
	printf("mode %s: %ld rounds, %ld EINVAL, %ld other\n", mode, ein + oth, ein, oth);
	if (strcmp(handler, "none")) {
		struct sigaction q;
		if (sigaction(SIGBUS, NULL, &q) == 0)
			printf("sigaction(SIGBUS) reports: %s\n",
			       q.sa_handler == SIG_DFL ? "SIG_DFL"
			       : (q.sa_flags & SA_SIGINFO) && q.sa_sigaction == own_handler
				       ? "own SA_SIGINFO handler"
			       : q.sa_handler == own_plain ? "own plain handler"
							   : "something else");
		fflush(stdout);
		if (own_sigbus(dir) < 0)
			return 4;
		printf("own SIGBUS: %d hit(s), at its own address: %s\n", (int)own_hits,
		       own_at ? "yes" : "no");
	}
	return 0;
}
