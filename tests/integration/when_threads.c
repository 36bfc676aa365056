/* when_threads: T threads call cuDeviceGetCount N times each at once, to
 * check that a when=N..M injection rule counts matching calls across
 * threads exactly.  Prints "injected=K total=T*N" (K = calls that did not
 * return CUDA_SUCCESS). usage: when_threads T N */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*init_fn)(unsigned);
typedef int (*count_fn)(int *);

static count_fn count;
static int per_thread;
static int failures;
static pthread_barrier_t start;

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < per_thread; i++) {
		int n = 0;
		if (count(&n) != 0)
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	pthread_t tid[64];

	per_thread = argc > 2 ? atoi(argv[2]) : 10;
	if (!h || threads < 1 || threads > 64) {
		fprintf(stderr, "when_threads: %s\n", h ? "bad thread count" : dlerror());
		return 2;
	}
	init_fn init = (init_fn)dlsym(h, "cuInit");
	count = (count_fn)dlsym(h, "cuDeviceGetCount");
	if (!init || !count || init(0) != 0) {
		fprintf(stderr, "when_threads: cuInit failed\n");
		return 2;
	}
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("injected=%d total=%d\n", failures, threads * per_thread);
	return 0;
}
