/*
 * rel_busy: a busy tracing loop for the crash and ring tests.
 *
 *   rel_busy [-t THREADS] [-n ITERS] [-i INIT] [-d DONEFILE] [-c MODE] [-s SEED] [-N NODE] [-p US]
 *
 * Opens NODE (default /dev/nvidiactl, served by the rig's libfakenv), makes
 * INIT ioctls from the main thread, then THREADS threads make ITERS ioctls
 * each.  Every ioctl's parameter block carries a marker, the thread index
 * and a per-thread sequence number (struct rel_blk in rel_common.h), so the
 * checker (rel_check) can tell exactly which calls are in the trace.  After
 * each ioctl returns, the thread stores seq + 1 in DONEFILE (a shared
 * mapping): when the process dies, DONEFILE says which calls had completed,
 * i.e. whose enter and exit records had been committed.
 *
 * MODE (default none) ends the process at a random point of the loop, chosen
 * from SEED: segv (a NULL store), abort, exit (_exit(3)), kill (SIGKILL to
 * itself), hang (thread 0 enters an ioctl that the fake kernel holds, via
 * FAKENV_HANG_CMD=REL_NR_HANG, and the main thread SIGKILLs the process while
 * it is inside).  The other threads are wherever they are.
 * -p US sleeps US microseconds before each call (a slower loop for an
 * outside kill).  Output on success: "rel_busy ok threads=T iters=N init=I".
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rel_common.h"

static int nthreads = 4, fd = -1;
static uint64_t iters = 2000, ninit = 16, crash_at = UINT64_MAX;
static const char *mode = "none";
static struct rel_done *done;
static struct rel_done local_done;
static pthread_barrier_t start;
static unsigned pause_us;

static void die_now(void)
{
	if (!strcmp(mode, "segv"))
		raise(SIGSEGV); /* as a NULL store would, without the compiler's opinion */
	else if (!strcmp(mode, "abort"))
		abort();
	else if (!strcmp(mode, "exit"))
		_exit(3);
	else if (!strcmp(mode, "kill"))
		kill(getpid(), SIGKILL);
	_exit(99);
}

static int call(uint32_t thread, uint64_t seq, unsigned nr)
{
	struct rel_blk b = { REL_MAGIC, thread, seq, { 0, 0 } };
	int r = ioctl(fd, REL_REQ(nr), &b);

	/* the fake kernel rejects this escape before touching the block */
	if (r != -1 || errno != EINVAL || b.magic != REL_MAGIC || b.seq != seq) {
		fprintf(stderr, "rel_busy: ioctl thread %u seq %llu = %d errno %d\n", thread,
			(unsigned long long)seq, r, errno);
		_exit(98);
	}
	return r;
}

static void *worker(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;

	pthread_barrier_wait(&start); /* all threads in the loop at once */
	for (uint64_t s = 0; s < iters; s++) {
		if (pause_us)
			usleep(pause_us);
		if (t == 0 && s == crash_at) {
			if (!strcmp(mode, "hang")) {
				__atomic_store_n(&done->hanging, 1, __ATOMIC_RELEASE);
				struct rel_blk b = { REL_MAGIC, t, s, { 0, 0 } };
				ioctl(fd, REL_REQ(REL_NR_HANG), &b);
				_exit(97); /* the kill must come first */
			}
			die_now();
		}
		call(t, s, REL_NR);
		__atomic_store_n(&done->done[t], s + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static struct rel_done *map_done(const char *path)
{
	int dfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	struct rel_done *d;

	if (dfd < 0 || ftruncate(dfd, sizeof *d) < 0) {
		perror(path);
		exit(2);
	}
	d = mmap(NULL, sizeof *d, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, 0);
	if (d == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	close(dfd);
	return d;
}

int main(int argc, char **argv)
{
	const char *donefile = NULL, *node = "/dev/nvidiactl";
	unsigned seed = 1;
	pthread_t th[REL_MAX_THREADS];
	int opt;

	while ((opt = getopt(argc, argv, "t:n:i:d:c:s:N:p:")) != -1) {
		switch (opt) {
		case 't': nthreads = atoi(optarg); break;
		case 'n': iters = strtoull(optarg, NULL, 0); break;
		case 'i': ninit = strtoull(optarg, NULL, 0); break;
		case 'd': donefile = optarg; break;
		case 'c': mode = optarg; break;
		case 's': seed = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'N': node = optarg; break;
		case 'p': pause_us = (unsigned)strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: rel_busy [-t T] [-n N] [-i I] [-d FILE] [-c MODE] [-s SEED] [-N NODE]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > REL_MAX_THREADS)
		return 2;
	done = donefile ? map_done(donefile) : &local_done;
	done->magic = REL_DONE_MAGIC;
	done->threads = (uint32_t)nthreads;
	done->iters = iters;
	done->init = ninit;
	if (strcmp(mode, "none")) {
		srand(seed);
		crash_at = iters / 4 + (uint64_t)rand() % (iters / 2 + 1);
		done->crash_at = crash_at;
	}

	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "rel_busy: %s: %s\n", node, strerror(errno));
		return 2;
	}
	for (uint64_t s = 0; s < ninit; s++) {
		call(REL_INIT_THREAD, s, REL_NR);
		__atomic_store_n(&done->init_done, s + 1, __ATOMIC_RELEASE);
	}
	pthread_barrier_init(&start, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i)) {
			fprintf(stderr, "rel_busy: pthread_create failed\n");
			return 2;
		}
	if (!strcmp(mode, "hang")) {
		struct timespec ts = { 0, 2000000 };
		while (!__atomic_load_n(&done->hanging, __ATOMIC_ACQUIRE))
			nanosleep(&ts, NULL);
		ts.tv_nsec = 100000000; /* thread 0 is inside the held ioctl by now */
		nanosleep(&ts, NULL);
		kill(getpid(), SIGKILL);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	close(fd);
	done->finished = 1;
	printf("rel_busy ok threads=%d iters=%llu init=%llu\n", nthreads, (unsigned long long)iters,
	       (unsigned long long)ninit);
	return 0;
}
