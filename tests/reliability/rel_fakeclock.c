/*
 * librel_fakeclock.so: preloaded in front of the shim, it makes
 * clock_gettime(CLOCK_REALTIME) return REL_FAKE_REALTIME_NS, so the name of
 * the trace file the shim will create (HOST-PID-STARTNS.cutrace) is known in
 * advance and something can be planted there (rel_plant).  Other clocks go
 * to the kernel directly.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((visibility("default"))) int clock_gettime(clockid_t id, struct timespec *ts)
{
	const char *v = getenv("REL_FAKE_REALTIME_NS");

	if (id == CLOCK_REALTIME && v && *v) {
		unsigned long long ns = strtoull(v, NULL, 10);
		ts->tv_sec = (time_t)(ns / 1000000000ull);
		ts->tv_nsec = (long)(ns % 1000000000ull);
		return 0;
	}
	return (int)syscall(SYS_clock_gettime, id, ts);
}
