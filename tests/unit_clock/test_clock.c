/*
 * shim/clock.c: timestamps read through the TSC against clock_gettime.
 *
 * Four threads for about 300 ms each read clock_gettime, ct_clock_ns and
 * clock_gettime again: the middle value must lie between the two others
 * (within a tolerance once the TSC is used), never go backwards in a thread,
 * and, where the TSC is usable here, come from a thread's anchor most of the
 * time (the point of it).  CUTRACE_CLOCK=gettime turns the TSC off.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"

/* the shim's own reader of small files, which clock.c uses */
ssize_t ct_read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len, f);
	fclose(f);
	return (ssize_t)n;
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 20 us: the anchor pair's own jitter in a VM plus the calibration error;
 * clock.c keeps it to about a microsecond */
#define TOL_NS 20000ull

struct run {
	uint64_t samples, anchored, backwards, early, late, worst;
};

static void *reader(void *arg)
{
	struct run *r = arg;
	uint64_t end = mono() + 300000000ull, last = 0;

	for (;;) {
		uint64_t a = mono(), x = ct_clock_ns(), b = mono();
		if (a > end)
			break;
		r->samples++;
		if (ct_tls_clock.span)
			r->anchored++;
		if (x < last)
			r->backwards++;
		last = x;
		if (x + TOL_NS < a)
			r->early++;
		if (x > b + TOL_NS)
			r->late++;
		uint64_t off = x < a ? a - x : x > b ? x - b : 0;
		if (off > r->worst)
			r->worst = off;
	}
	return NULL;
}

START_TEST(tsc_follows_the_clock)
{
	pthread_t th[4];
	struct run r[4];

	memset(r, 0, sizeof r);
	ct_clock_setup();
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, reader, &r[i]), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		printf("thread %d: %llu samples, %llu from the TSC, worst offset %llu ns\n", i,
		       (unsigned long long)r[i].samples, (unsigned long long)r[i].anchored,
		       (unsigned long long)r[i].worst);
		ck_assert_uint_gt(r[i].samples, 1000);
		ck_assert_uint_eq(r[i].backwards, 0);
		ck_assert_uint_eq(r[i].early, 0);
		ck_assert_uint_eq(r[i].late, 0);
		if (ct_clock_uses_tsc())
			/* all but the first 5 ms (calibration) and one read per anchor */
			ck_assert_uint_gt(r[i].anchored, r[i].samples * 9 / 10);
		else
			ck_assert_uint_eq(r[i].anchored, 0);
	}
	printf("TSC %s\n", ct_clock_uses_tsc() ? "used" : "not usable here: clock_gettime throughout");
}
END_TEST

/* a backward step of the anchor is absorbed: the next anchor starts where the
 * old one would have been and slews the lead away over one span */
START_TEST(anchor_never_goes_back)
{
	ct_clock_setup();
	if (!ct_clock_uses_tsc())
		return;
	usleep(10000); /* past the calibration */
	ct_tls_clock.span = 1; /* the next read anchors afresh */
	(void)ct_clock_ns();
	uint64_t m0 = ct_tls_clock.mult;
	/* pretend the current anchor runs 50 us ahead of the clock */
	ct_tls_clock.ns += 50000;
	uint64_t ahead = ct_clock_ns();
	ct_tls_clock.span = 1; /* used up: the next read anchors again */
	uint64_t y = ct_clock_ns(), now = mono();
	ck_assert_uint_ge(y, ahead);
	ck_assert_uint_gt(y, now);            /* kept the lead for now ... */
	ck_assert_uint_eq(ct_tls_clock.span, CT_CLOCK_SPAN);
	ck_assert_uint_gt(m0 - ct_tls_clock.mult, (40000ull << 32) >> CT_CLOCK_SPAN_SHIFT); /* slewing */
	/* ... and is back on the clock once the span is over */
	struct timespec d = { 0, 150000000 };
	nanosleep(&d, NULL);
	uint64_t a = mono(), z = ct_clock_ns(), b = mono();
	ck_assert_uint_ge(z + TOL_NS, a);
	ck_assert_uint_le(z, b + TOL_NS);
}
END_TEST

START_TEST(gettime_when_asked)
{
	/* a fresh process: the setup reads CUTRACE_CLOCK */
	pid_t pid = fork();
	if (pid == 0) {
		setenv("CUTRACE_CLOCK", "gettime", 1);
		ct_clock_setup();
		uint64_t a = mono(), x = ct_clock_ns(), b = mono();
		_exit(ct_clock_uses_tsc() || ct_tls_clock.span || x < a || x > b ? 1 : 0);
	}
	int st = -1;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "CUTRACE_CLOCK=gettime still used the TSC");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clock");
	TCase *t = tcase_create("clock");
	int failed;

	tcase_set_timeout(t, 30);
	tcase_add_test(t, gettime_when_asked);
	tcase_add_test(t, tsc_follows_the_clock);
	tcase_add_test(t, anchor_never_goes_back);
	suite_add_tcase(s, t);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
