/*
 * rel_fork MODE: process creation around a traced, multi-threaded process.
 *   threads   4 threads keep making marked ioctls while the main
 *             thread forks 20 children; each child makes one marked ioctl
 *             (thread 200, seq k) and exits through exit(); then 5 vfork +
 *             exec children and 5 posix_spawn children (with a file action)
 *             run "rel_fork child K", which makes one marked ioctl (thread
 *             300 + K) and exits.  Every child must finish within 10 s (a
 *             lock held by another thread at fork time would hang it).
 *   chain N   exec chain: a marked ioctl (thread 400, seq N), then
 *             execv(/proc/self/exe, "chain N-1") down to 0.
 * Prints "rel_fork ok forks=F vforks=V spawns=S" (threads mode).
 * Run with librel_fakedev.so (or the rig) after the shim.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rel_common.h"

extern char **environ;
static int stop;

static int marked_call(uint32_t thread, uint64_t seq)
{
	struct rel_blk b = { REL_MAGIC, thread, seq, { 0, 0 } };
	int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	int r = ioctl(fd, REL_REQ(REL_NR), &b);
	int ok = fd >= 0 && r == -1 && errno == EINVAL;

	close(fd);
	return ok;
}

static void *busy(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;
	uint64_t s = 0;
	int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);

	/* paced (about 20000 calls/s per thread): the trace must not wrap here */
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		struct rel_blk b = { REL_MAGIC, t, s++, { 0, 0 } };
		ioctl(fd, REL_REQ(REL_NR), &b);
		usleep(50);
	}
	close(fd);
	return (void *)(uintptr_t)s;
}

/* wait for pid at most 10 s; 0 when it exited 0 */
static int reap(pid_t pid)
{
	struct timespec ts = { 0, 2000000 };
	int st;

	for (int i = 0; i < 5000; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
		if (r < 0)
			return -1;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	fprintf(stderr, "rel_fork: child %d hung\n", (int)pid);
	return -1;
}

static int threads_mode(const char *self)
{
	pthread_t th[4];
	/* static: vfork children share this frame's registers with us */
	static int forks, vforks, spawns, bad;
	char arg[32];

	if (!marked_call(REL_INIT_THREAD, 0))
		return 3;
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, busy, (void *)(uintptr_t)i);
	for (int k = 0; k < 20; k++) {
		pid_t p = fork();
		if (p == 0)
			exit(marked_call(200, (uint64_t)k) ? 0 : 1);
		if (p < 0 || reap(p) < 0)
			bad++;
		else
			forks++;
	}
	for (int k = 0; k < 5; k++) {
		char *av[] = { (char *)self, "child", arg, NULL };
		snprintf(arg, sizeof arg, "%d", k);
		pid_t p = vfork();
		if (p == 0) {
			execve(self, av, environ);
			_exit(127);
		}
		if (p < 0 || reap(p) < 0)
			bad++;
		else
			vforks++;
	}
	for (int k = 0; k < 5; k++) {
		posix_spawn_file_actions_t fa;
		char *av[] = { (char *)self, "child", arg, NULL };
		pid_t p;
		snprintf(arg, sizeof arg, "%d", 10 + k);
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 9, "/dev/null", O_RDONLY, 0);
		if (posix_spawn(&p, self, &fa, NULL, av, environ) != 0 || reap(p) < 0)
			bad++;
		else
			spawns++;
		posix_spawn_file_actions_destroy(&fa);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("rel_fork ok forks=%d vforks=%d spawns=%d\n", forks, vforks, spawns);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "threads"))
		return threads_mode("/proc/self/exe");
	if (argc == 3 && !strcmp(argv[1], "child"))
		return marked_call(300 + (uint32_t)atoi(argv[2]), 0) ? 0 : 1;
	if (argc == 3 && !strcmp(argv[1], "chain")) {
		int n = atoi(argv[2]);
		char next[32];
		if (!marked_call(400, (uint64_t)n))
			return 1;
		if (n <= 0) {
			printf("rel_fork chain done\n");
			return 0;
		}
		snprintf(next, sizeof next, "%d", n - 1);
		char *av[] = { argv[0], "chain", next, NULL };
		execv("/proc/self/exe", av);
		return 127;
	}
	fprintf(stderr, "usage: rel_fork threads | chain N | child K\n");
	return 2;
}
