/*
 * Record timestamps through the TSC (clock.h says why and when).
 *
 * Calibration.  ct_clock_setup() takes a first (ticks, ns) pair when the
 * trace file is created.  Until CT_CLOCK_CAL_NS have passed every timestamp
 * is a clock_gettime() call; after that the nanoseconds per tick are the
 * ratio of the two spans since that first pair, recomputed (more precisely)
 * each time the span has doubled.  Any thread may store a new ratio: each
 * is a valid estimate, so the race is harmless.
 *
 * Pairs.  A (ticks, ns) pair is the TSC read on both sides of
 * clock_gettime(), taken again when the two reads lie more than
 * CT_CLOCK_PAIR_TICKS apart (the thread was preempted between them: the
 * pair would be off by that long), keeping the tightest of a few tries.
 *
 * Anchors.  A thread whose anchor is used up (or that has none) takes a pair
 * and starts a new anchor from it.  So that its timestamps never go
 * backwards, a new anchor never starts below what the old one gives for the
 * same tick; when the old one ran ahead of the clock by e, the thread's
 * ratio is lowered by e over the next span (at most to half), so the two
 * meet again at its end instead of the lead growing from span to span (the
 * way NTP slews a clock).
 */
#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define CT_CLOCK_CAL_NS     5000000ull /* 5 ms before the first ratio */
#define CT_CLOCK_PAIR_TICKS 4096u      /* ~2 us: a clock_gettime() is ~80 ticks */
#define CT_CLOCK_PAIR_TRIES 4

CT_TLS struct ct_clock_anchor ct_tls_clock;

static int clock_tsc;               /* set once by ct_clock_setup */
static uint64_t cal_tsc0, cal_ns0;  /* the first pair */
static uint64_t cal_mult, cal_span; /* the ratio (32.32), and the span (ns) it came from */

/* CLOCK_MONOTONIC from the clock itself (shim.h; the header's times, the
 * anchors, and every timestamp where the TSC is not used) */
uint64_t ct_now_ns(void)
{
	struct timespec ts = { 0, 0 };
	int err = errno;

	/* it cannot fail but where a seccomp filter refuses the system call
	 * (no vDSO): the program's errno stays whatever it was, also around
	 * the calls the shim records (the recording paths count on it) */
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		errno = err;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ct_clock_uses_tsc(void)
{
	return __atomic_load_n(&clock_tsc, __ATOMIC_ACQUIRE);
}

#if defined(__x86_64__)
/* a (ticks, ns) pair read closely together (see "Pairs") */
static uint64_t read_pair(uint64_t *tsc)
{
	uint64_t best_gap = UINT64_MAX, ns = 0;

	for (int i = 0; i < CT_CLOCK_PAIR_TRIES; i++) {
		uint64_t a = __rdtsc(), n = ct_now_ns(), b = __rdtsc();
		if (b - a < best_gap) {
			best_gap = b - a;
			*tsc = a + (b - a) / 2;
			ns = n;
		}
		if (best_gap <= CT_CLOCK_PAIR_TICKS)
			break;
	}
	return ns;
}

/* the kernel keeps time with the TSC, the CPU says it runs at a constant
 * rate in every state, and this process may execute RDTSC */
static int tsc_usable(void)
{
	unsigned a, b, c, d, tsc_mode = 0;
	char src[32];
	const char *env = getenv("CUTRACE_CLOCK");
	ssize_t n;

	if (env && !strcmp(env, "gettime"))
		return 0;
	/* CPUID 0x80000007 EDX bit 8: invariant TSC (Intel SDM vol. 2, CPUID;
	 * AMD APM vol. 3, "Advanced Power Management Information") */
	if (__get_cpuid_max(0x80000000u, NULL) < 0x80000007u)
		return 0;
	__cpuid(0x80000007u, a, b, c, d);
	if (!(d & (1u << 8)))
		return 0;
	n = ct_read_file("/sys/devices/system/clocksource/clocksource0/current_clocksource", src,
			 sizeof src);
	if (n != 4 || memcmp(src, "tsc\n", 4))
		return 0;
	/* PR_GET_TSC: PR_TSC_SIGSEGV would turn RDTSC into a signal */
	if (syscall(SYS_prctl, PR_GET_TSC, &tsc_mode, 0, 0, 0) != 0 || tsc_mode != PR_TSC_ENABLE)
		return 0;
	return 1;
}
#endif

void ct_clock_setup(void)
{
#if defined(__x86_64__)
	if (clock_tsc || !tsc_usable())
		return;
	cal_ns0 = read_pair(&cal_tsc0);
	__atomic_store_n(&clock_tsc, 1, __ATOMIC_RELEASE);
#endif
}

uint64_t ct_clock_anchor_ns(uint64_t t)
{
	struct ct_clock_anchor *c = &ct_tls_clock;
	uint64_t ns = 0, m, lead = 0;

	if (!__atomic_load_n(&clock_tsc, __ATOMIC_ACQUIRE))
		goto no_tsc;
#if defined(__x86_64__)
	ns = read_pair(&t);
#endif
	if (t <= cal_tsc0 || ns <= cal_ns0)
		goto no_tsc;
	/* the ratio: first after CT_CLOCK_CAL_NS, then each time the span doubled */
	m = __atomic_load_n(&cal_mult, __ATOMIC_RELAXED);
	if (ns - cal_ns0 >= CT_CLOCK_CAL_NS && ns - cal_ns0 >= 2 * __atomic_load_n(&cal_span, __ATOMIC_RELAXED)) {
		m = (uint64_t)(((unsigned __int128)(ns - cal_ns0) << 32) / (t - cal_tsc0));
		__atomic_store_n(&cal_mult, m, __ATOMIC_RELAXED);
		__atomic_store_n(&cal_span, ns - cal_ns0, __ATOMIC_RELAXED);
	}
	if (!m)
		goto no_tsc;
	/* never below what the old anchor gives for this tick */
	if (c->span && t >= c->tsc) {
		uint64_t old = c->ns + (uint64_t)(((unsigned __int128)(t - c->tsc) * c->mult) >> 32);
		if (old > ns) {
			lead = old - ns;
			ns = old;
		}
	}
	if (c->last > ns) /* a pair read earlier than the thread's last value */
		ns = c->last;
	/* a signal handler that records while the anchor is half written must
	 * not use it: no span until it is whole */
	c->span = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->tsc = t;
	c->ns = ns;
	/* slew the lead away over the next span, at most at half the rate */
	lead = lead < (m >> 1) >> (32 - CT_CLOCK_SPAN_SHIFT) ? lead : (m >> 1) >> (32 - CT_CLOCK_SPAN_SHIFT);
	c->mult = m - ((lead << 32) >> CT_CLOCK_SPAN_SHIFT);
	c->last = ns;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->span = CT_CLOCK_SPAN;
	return ns;
no_tsc:
	/* the clock alone: still never below a value the TSC gave this thread */
	ns = ct_now_ns();
	c->span = 0;
	if (c->last > ns)
		ns = c->last;
	return c->last = ns;
}
