/*
 * bench_loop: the program every shim benchmark runs, raw or preloaded.
 *
 *   bench_loop ioctl PATH N PAIRS        ioctl(FIONREAD) on an fd of PATH
 *   bench_loop openclose PATH N PAIRS    open(PATH) + close pairs
 *   bench_loop nv N THREADS WARMUP       _IOWR('F', 0x20, 256) ioctls on
 *                                        /dev/nvidiactl from THREADS threads
 *   bench_loop footprint N               N recorded ioctls, then the memory
 *                                        figures of this process
 *   bench_loop clock N                   what one timestamp costs here: a
 *                                        bare RDTSC (x86-64) and a
 *                                        clock_gettime(CLOCK_MONOTONIC)
 *
 * Output is one line of key=value pairs for scripts/bench.sh.  Times are in
 * nanoseconds per call.
 *
 * ioctl/openclose measure in one process, batch against batch, the call
 * through its symbol (what the program normally calls: the preloaded wrapper
 * if there is one) and the same call made directly on the next library's
 * definition (libc.so.6's, or BENCH_DIRECT_LIB's), so the wrapper's cost is
 * a difference inside one process: on these VMs two runs of the same
 * program differ by more than the 3% being measured.  Batches alternate
 * A B B A so drift cancels; the figures are the median over BATCHES pairs.
 * Without a preload both paths reach libc, which gives the method's zero.
 *
 * nv gives per-thread CPU time (CLOCK_THREAD_CPUTIME_ID), so threads
 * descheduled on a 2-core machine are not charged for waiting, and the wall
 * time per event over all threads: cpu_ns / wall_ns is how many threads
 * really ran at once (with more than one thread, thread i is pinned to the
 * i-th allowed CPU).
 *
 * Each measured call sits in its own non-inlined bench_*_call function so
 * that callgrind --toggle-collect=bench_X_call counts exactly the
 * instructions of that call (the program's own call and return are the
 * same with and without a preload, so they cancel in the difference).
 * Link with -Wl,-z,now: no lazy binding inside the measured calls.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define NV_BLOCK 256
/* an escape number the shim has no special capture for: 256 bytes before
 * and after the call, nothing behind pointers */
#define NV_REQ _IOWR('F', 0x20, char[NV_BLOCK])

#define BENCH_CALL __attribute__((noinline, noclone, used))

BENCH_CALL int bench_ioctl_call(int fd, int *arg)
{
	return ioctl(fd, FIONREAD, arg);
}

BENCH_CALL int bench_open_call(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC);
}

BENCH_CALL int bench_close_call(int fd)
{
	return close(fd);
}

BENCH_CALL int bench_nv_call(int fd, void *blk)
{
	return ioctl(fd, NV_REQ, blk);
}

/* the same call for the warm-up, outside callgrind's toggle */
BENCH_CALL int bench_nv_warm_call(int fd, void *blk)
{
	return ioctl(fd, NV_REQ, blk);
}

/* the next definitions, called without going through the program's symbol */
static int (*direct_ioctl)(int, unsigned long, ...);
static int (*direct_open)(const char *, int, ...);
static int (*direct_close)(int);

static int resolve_direct(void)
{
	const char *lib = getenv("BENCH_DIRECT_LIB");
	void *h = dlopen(lib && *lib ? lib : "libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	if (!h) {
		fprintf(stderr, "bench_loop: %s is not loaded\n", lib && *lib ? lib : "libc.so.6");
		return -1;
	}
	direct_ioctl = (int (*)(int, unsigned long, ...))dlsym(h, "ioctl");
	direct_open = (int (*)(const char *, int, ...))dlsym(h, "open");
	direct_close = (int (*)(int))dlsym(h, "close");
	return direct_ioctl && direct_open && direct_close ? 0 : -1;
}

BENCH_CALL int bench_ioctl_direct(int fd, int *arg)
{
	return direct_ioctl(fd, FIONREAD, arg);
}

BENCH_CALL int bench_openclose_direct(const char *path)
{
	return direct_close(direct_open(path, O_RDONLY | O_CLOEXEC));
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static long arg_long(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == 0 || *end || v < 0) {
		fprintf(stderr, "bench_loop: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, long n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* what one pass-through loop measures: n calls either way */
struct ab_loop {
	const char *name;
	void (*via)(const char *path, int fd, long n);    /* through the symbol */
	void (*direct)(const char *path, int fd, long n); /* the next definition */
};

static void ioctl_via(const char *path, int fd, long n)
{
	int v;
	(void)path;
	for (long i = 0; i < n; i++)
		bench_ioctl_call(fd, &v);
}

static void ioctl_direct(const char *path, int fd, long n)
{
	int v;
	(void)path;
	for (long i = 0; i < n; i++)
		bench_ioctl_direct(fd, &v);
}

static void openclose_via(const char *path, int fd, long n)
{
	(void)fd;
	for (long i = 0; i < n; i++)
		bench_close_call(bench_open_call(path));
}

static void openclose_direct(const char *path, int fd, long n)
{
	(void)fd;
	for (long i = 0; i < n; i++)
		bench_openclose_direct(path);
}

static double time_loop(void (*f)(const char *, int, long), const char *path, int fd, long n)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

	f(path, fd, n);
	return (double)(clock_ns(CLOCK_MONOTONIC) - t0) / (double)n;
}

static int run_ab(const struct ab_loop *l, const char *path, int fd, long n, long pairs)
{
	double *via = calloc((size_t)pairs, sizeof *via), *dir = calloc((size_t)pairs, sizeof *dir);
	double *diff = calloc((size_t)pairs, sizeof *diff);
	double vmin = 1e30, dmin = 1e30;

	if (!via || !dir || !diff)
		return 1;
	l->via(path, fd, n / 10 + 1); /* warm caches and branch predictors */
	l->direct(path, fd, n / 10 + 1);
	for (long b = 0; b < pairs; b++) {
		if (b % 2 == 0) {
			via[b] = time_loop(l->via, path, fd, n);
			dir[b] = time_loop(l->direct, path, fd, n);
		} else {
			dir[b] = time_loop(l->direct, path, fd, n);
			via[b] = time_loop(l->via, path, fd, n);
		}
		diff[b] = via[b] - dir[b];
		vmin = via[b] < vmin ? via[b] : vmin;
		dmin = dir[b] < dmin ? dir[b] : dmin;
	}
	printf("mode=%s via_ns=%.2f direct_ns=%.2f delta_ns=%.2f via_min_ns=%.2f direct_min_ns=%.2f "
	       "calls=%ld\n", l->name, median(via, pairs), median(dir, pairs), median(diff, pairs),
	       vmin, dmin, n * pairs + n / 10 + 1);
	free(via);
	free(dir);
	free(diff);
	return 0;
}

static int run_ioctl(const char *path, long n, long pairs)
{
	static const struct ab_loop l = { "ioctl", ioctl_via, ioctl_direct };
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0) {
		perror(path);
		return 1;
	}
	if (resolve_direct() < 0)
		return 1;
	r = run_ab(&l, path, fd, n, pairs);
	close(fd);
	return r;
}

static int run_openclose(const char *path, long n, long pairs)
{
	static const struct ab_loop l = { "openclose", openclose_via, openclose_direct };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror(path);
		return 1;
	}
	close(fd);
	if (resolve_direct() < 0)
		return 1;
	return run_ab(&l, path, -1, n, pairs);
}

/* ---- recorded ioctls from several threads --------------------------------- */
struct nv_thread {
	pthread_t th;
	int fd;
	long n;
	pthread_barrier_t *go;
	uint64_t cpu_ns;
	uint64_t wall0, wall1; /* CLOCK_MONOTONIC around the loop */
	long pin;              /* CPU slot to pin to, -1: none */
};

/* Spread the threads over the CPUs we may run on (thread i on the i-th
 * allowed CPU, round robin), so that on a 2-core machine two threads really
 * append at the same time instead of taking turns on one core. */
static void pin_thread(long i)
{
	cpu_set_t allowed, one;
	long k = 0, want;

	if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2)
		return;
	want = i % CPU_COUNT(&allowed);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &allowed))
			continue;
		if (k++ == want) {
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			pthread_setaffinity_np(pthread_self(), sizeof one, &one);
			return;
		}
	}
}

static void *nv_worker(void *p)
{
	struct nv_thread *t = p;
	unsigned char blk[NV_BLOCK];
	uint64_t c0;

	if (t->pin >= 0)
		pin_thread(t->pin);

	memset(blk, 0x5a, sizeof blk);
	bench_nv_call(t->fd, blk); /* first call of the thread: tid cache etc. */
	pthread_barrier_wait(t->go);
	t->wall0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < t->n; i++)
		bench_nv_call(t->fd, blk);
	t->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	t->wall1 = clock_ns(CLOCK_MONOTONIC);
	return NULL;
}

static int run_nv(long n, long nthreads, long warmup)
{
	struct nv_thread *t = calloc((size_t)nthreads, sizeof *t);
	pthread_barrier_t go;
	unsigned char blk[NV_BLOCK];
	uint64_t w0 = UINT64_MAX, w1 = 0, total = 0, worst = 0;
	int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);

	if (fd < 0 || !t || nthreads < 1) {
		perror("/dev/nvidiactl (is the bench fake node preloaded?)");
		return 1;
	}
	memset(blk, 0x5a, sizeof blk);
	/* warm-up: with a big enough count every page of the trace file has
	 * been touched once, so the loop measures the steady state */
	for (long i = 0; i < warmup; i++)
		bench_nv_warm_call(fd, blk);
	pthread_barrier_init(&go, NULL, (unsigned)nthreads + 1);
	for (long i = 0; i < nthreads; i++) {
		t[i].fd = fd;
		t[i].n = n;
		t[i].go = &go;
		t[i].pin = nthreads > 1 ? i : -1;
		if (pthread_create(&t[i].th, NULL, nv_worker, &t[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	pthread_barrier_wait(&go);
	for (long i = 0; i < nthreads; i++) {
		pthread_join(t[i].th, NULL);
		total += t[i].cpu_ns;
		if (t[i].cpu_ns > worst)
			worst = t[i].cpu_ns;
		w0 = t[i].wall0 < w0 ? t[i].wall0 : w0;
		w1 = t[i].wall1 > w1 ? t[i].wall1 : w1;
	}
	printf("mode=nv threads=%ld events=%ld cpu_ns=%.2f worst_thread_ns=%.2f wall_ns=%.2f calls=%ld\n",
	       nthreads, n * nthreads, (double)total / (double)(n * nthreads),
	       (double)worst / (double)n,
	       (double)(w1 - w0) / (double)(n * nthreads),
	       nthreads * (n + 1));
	close(fd);
	pthread_barrier_destroy(&go);
	free(t);
	return 0;
}

/* ---- memory of this process ------------------------------------------------ */
static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t k = strlen(key);

	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, k) && line[k] == ':')
			v = atol(line + k + 1);
	if (f)
		fclose(f);
	return v;
}

/* Rss and Size of the mappings whose file name contains `needle` */
static void smaps_kb(const char *needle, long *rss, long *size)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[1024];
	int in = 0;

	*rss = *size = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long a, b;
		/* a mapping header "start-end perms offset dev inode [path]";
		 * no field line ("Rss:", "AnonHugePages:") parses as hex-hex */
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2) {
			in = strstr(line, needle) != NULL;
			continue;
		}
		if (!in)
			continue;
		if (!strncmp(line, "Rss:", 4))
			*rss += atol(line + 4);
		else if (!strncmp(line, "Size:", 5))
			*size += atol(line + 5);
	}
	if (f)
		fclose(f);
}

static int run_footprint(long n)
{
	unsigned char blk[NV_BLOCK];
	long trace_rss, trace_size, lib_rss, lib_size;
	int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		perror("/dev/nvidiactl (is the bench fake node preloaded?)");
		return 1;
	}
	memset(blk, 0x5a, sizeof blk);
	for (long i = 0; i < n; i++)
		bench_nv_call(fd, blk);
	close(fd);
	smaps_kb(".cutrace", &trace_rss, &trace_size);
	smaps_kb("libcutrace", &lib_rss, &lib_size);
	printf("mode=footprint vmrss_kb=%ld vmhwm_kb=%ld trace_rss_kb=%ld trace_size_kb=%ld "
	       "shim_lib_rss_kb=%ld\n",
	       status_kb("VmRSS"), status_kb("VmHWM"), trace_rss, trace_size, lib_rss);
	return 0;
}

/* the cost of the two timestamps every recorded call takes (shim/clock.h):
 * back to back, so the figure is the instruction's throughput, which is
 * what a record pays for it */
static int run_clock(long n)
{
	volatile uint64_t sink = 0;
	uint64_t t0, t1, t2;

	t0 = clock_ns(CLOCK_MONOTONIC);
#if defined(__x86_64__)
	for (long i = 0; i < n; i++)
		sink = __rdtsc();
#endif
	t1 = clock_ns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++)
		sink = clock_ns(CLOCK_MONOTONIC);
	t2 = clock_ns(CLOCK_MONOTONIC);
	(void)sink;
#if defined(__x86_64__)
	printf("mode=clock rdtsc_ns=%.2f gettime_ns=%.2f\n", (double)(t1 - t0) / (double)n,
	       (double)(t2 - t1) / (double)n);
#else
	printf("mode=clock rdtsc_ns=nan gettime_ns=%.2f\n", (double)(t2 - t1) / (double)n);
#endif
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_loop ioctl PATH N PAIRS | openclose PATH N PAIRS |\n"
			"       nv N THREADS WARMUP | footprint N | clock N\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "ioctl") && argc == 5)
		return run_ioctl(argv[2], arg_long(argv[3], "N"), arg_long(argv[4], "PAIRS") ?: 1);
	if (!strcmp(argv[1], "openclose") && argc == 5)
		return run_openclose(argv[2], arg_long(argv[3], "N"),
				     arg_long(argv[4], "PAIRS") ?: 1);
	if (!strcmp(argv[1], "nv") && argc == 5)
		return run_nv(arg_long(argv[2], "N"), arg_long(argv[3], "THREADS"),
			      arg_long(argv[4], "WARMUP"));
	if (!strcmp(argv[1], "footprint") && argc == 3)
		return run_footprint(arg_long(argv[2], "N"));
	if (!strcmp(argv[1], "clock") && argc == 3)
		return run_clock(arg_long(argv[2], "N"));
	usage();
	return 2;
}
