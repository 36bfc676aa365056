/*
 * rel_sig [-t THREADS] [-n ITERS]: hooks called from signal handlers and from
 * many threads at once.  THREADS workers each open /dev/nvidiactl, make a
 * marked ioctl and close the fd, ITERS times, with errno set to a sentinel
 * before every call that succeeds; a signaller thread keeps sending SIGUSR1
 * to the workers, whose handler does the same three calls (request
 * REL_NR_SIGNAL) and restores errno.  The handler can interrupt a worker
 * anywhere, including inside the shim's hooks.  Every result is checked;
 * the program prints what it did, for rel_check to find in the trace:
 *   "rel_sig calls=C handler_calls=H errors=E errno_changed=X"
 * Run with librel_fakedev.so (lock-free) after the shim.
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
#include <time.h>
#include <unistd.h>

#include "rel_common.h"

#define SENTINEL 4242

static int nthreads = 8;
static unsigned long iters = 1500;
static unsigned long handler_calls, errors, errno_changed;
static int finished[REL_MAX_THREADS];
static __thread uint32_t my_index;
static __thread uint64_t my_handler_seq;

static void one_round(uint32_t thread, uint64_t seq, unsigned nr, int check_errno)
{
	struct rel_blk b = { REL_MAGIC, thread, seq, { 0, 0 } };
	int fd, r;

	errno = SENTINEL;
	fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
	else if (check_errno && errno != SENTINEL)
		__atomic_add_fetch(&errno_changed, 1, __ATOMIC_RELAXED);
	r = ioctl(fd, REL_REQ(nr), &b);
	if (r != -1 || errno != EINVAL)
		__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
	errno = SENTINEL;
	if (close(fd) != 0)
		__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
	else if (check_errno && errno != SENTINEL)
		__atomic_add_fetch(&errno_changed, 1, __ATOMIC_RELAXED);
}

static void handler(int sig)
{
	int saved = errno;

	(void)sig;
	one_round(100 + my_index, my_handler_seq++, REL_NR_SIGNAL, 0);
	__atomic_add_fetch(&handler_calls, 1, __ATOMIC_RELAXED);
	errno = saved;
}

static void *worker(void *arg)
{
	sigset_t usr1;

	/* SIGUSR1 stays blocked (inherited from main) until the handler can
	 * tell which thread it runs on */
	my_index = (uint32_t)(uintptr_t)arg;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	for (unsigned long s = 0; s < iters; s++)
		one_round(my_index, s, REL_NR, 1);
	__atomic_store_n(&finished[my_index], 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *signaller(void *arg)
{
	pthread_t *th = arg;
	struct timespec ts = { 0, 20000 };

	/* workers are joined only after this thread ends, so th[] stays valid */
	for (unsigned long i = 0;; i++) {
		int live = 0;
		for (int k = 0; k < nthreads; k++)
			live += !__atomic_load_n(&finished[k], __ATOMIC_ACQUIRE);
		if (!live)
			break;
		unsigned t = (unsigned)(i % (unsigned)nthreads);
		if (!__atomic_load_n(&finished[t], __ATOMIC_ACQUIRE))
			pthread_kill(th[t], SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[REL_MAX_THREADS], sg;
	struct sigaction sa;
	int opt;

	while ((opt = getopt(argc, argv, "t:n:")) != -1) {
		if (opt == 't')
			nthreads = atoi(optarg);
		else if (opt == 'n')
			iters = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (nthreads < 1 || nthreads > REL_MAX_THREADS)
		return 2;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	/* the main thread creates the trace before the storm */
	one_round(REL_INIT_THREAD, 0, REL_NR, 1);
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	pthread_create(&sg, NULL, signaller, th);
	pthread_join(sg, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	/* a signal can still be pending for a finished thread: gone with it */
	printf("rel_sig calls=%lu handler_calls=%lu errors=%lu errno_changed=%lu\n",
	       (unsigned long)nthreads * iters + 1, handler_calls, errors, errno_changed);
	return errors || errno_changed ? 1 : 0;
}
