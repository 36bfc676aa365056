/*
 * Record timestamps: CLOCK_MONOTONIC nanoseconds, read through the TSC.
 *
 * A recorded ioctl takes two timestamps.  clock_gettime() costs about 28 ns
 * in a VM (the vDSO's sequence lock, an ordered TSC read, the conversion);
 * a bare RDTSC about 13 ns.  Where the kernel itself keeps time with an
 * invariant TSC (clocksource "tsc"), each thread converts ticks with one
 * multiply from an anchor, a (ticks, clock_gettime) pair it took itself, and
 * takes a new anchor every CT_CLOCK_SPAN ticks (a few tens of ms).  The
 * result stays CLOCK_MONOTONIC nanoseconds for the reader (the format does
 * not change): within about a microsecond of clock_gettime, never going
 * backwards in a thread.  Anywhere else (no invariant TSC, another
 * clocksource, RDTSC disabled by prctl, not x86-64, CUTRACE_CLOCK=gettime)
 * every timestamp is a clock_gettime() call, as before.  clock.c has the
 * anchoring and the calibration.  Not covered: a program that itself turns
 * RDTSC into a signal (prctl PR_SET_TSC) after its trace file was created;
 * run it with CUTRACE_CLOCK=gettime.
 */
#ifndef CUTRACE_CLOCK_H
#define CUTRACE_CLOCK_H

#include "shim.h"

#include <stdint.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* ticks between two anchors of a thread (2^26: 27 ms at 2.5 GHz) */
#define CT_CLOCK_SPAN_SHIFT 26
#define CT_CLOCK_SPAN (1ull << CT_CLOCK_SPAN_SHIFT)

struct ct_clock_anchor {
	uint64_t tsc;   /* ticks at the anchor */
	uint64_t ns;    /* nanoseconds at the anchor */
	uint64_t mult;  /* nanoseconds per tick, 32.32 fixed point */
	uint64_t span;  /* ticks the anchor is good for; 0: none, ask the clock */
	uint64_t last;  /* the value the last anchor (or clock read) gave */
};

extern CT_TLS struct ct_clock_anchor ct_tls_clock CT_HIDDEN;

uint64_t ct_clock_anchor_ns(uint64_t tsc) CT_HIDDEN;
/* decide whether the TSC may be used and start its calibration; called
 * once, when the trace file is created (it reads a sysfs file) */
void ct_clock_setup(void) CT_HIDDEN;
/* 1 when this process takes its timestamps from the TSC (unit_clock asks) */
int ct_clock_uses_tsc(void) CT_HIDDEN;

static inline uint64_t ct_clock_ns(void)
{
#if defined(__x86_64__)
	uint64_t t = __rdtsc(), d = t - ct_tls_clock.tsc;

	if (__builtin_expect(d < ct_tls_clock.span, 1))
		return ct_tls_clock.ns + (uint64_t)(((unsigned __int128)d * ct_tls_clock.mult) >> 32);
	return ct_clock_anchor_ns(t);
#else
	return ct_now_ns();
#endif
}

#endif
