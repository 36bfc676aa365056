/*
 * tracer/base/ranges.c: sets of numbers as ranges ("0-511", "100-140,200")
 * and host names as a Slurm hostlist ("node[01-64]"), sorted and without
 * duplicates, cut at a whole item when the buffer is short; and a round
 * trip: expanding what was written gives back the set.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ranges.h"

static const char *ints(int64_t *v, size_t n, size_t *distinct)
{
	static char buf[4096];
	size_t d = ct_ranges_ints(buf, sizeof buf, v, n);
	if (distinct)
		*distinct = d;
	return buf;
}

START_TEST(t_ints)
{
	int64_t a[512];
	size_t d;

	for (int i = 0; i < 512; i++)
		a[i] = 511 - i;
	ck_assert_str_eq(ints(a, 512, &d), "0-511");
	ck_assert_uint_eq(d, 512);

	int64_t b[] = { 200, 140, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112,
			113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127,
			128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 200, 100 };
	ck_assert_str_eq(ints(b, sizeof b / sizeof b[0], &d), "100-140,200");
	ck_assert_uint_eq(d, 42);

	int64_t c[] = { 7 };
	ck_assert_str_eq(ints(c, 1, &d), "7");
	ck_assert_uint_eq(d, 1);
	ck_assert_str_eq(ints(c, 0, &d), "");
	ck_assert_uint_eq(d, 0);

	int64_t e[] = { 3, 1, 5, 6, 9, 8, 7, 11 };
	ck_assert_str_eq(ints(e, 8, NULL), "1,3,5-9,11");

	int64_t f[] = { -1, -3, -2, 5, 4294967296LL };
	ck_assert_str_eq(ints(f, 5, NULL), "-3--1,5,4294967296");
}
END_TEST

START_TEST(t_ints_cut)
{
	int64_t v[] = { 1, 3, 5, 7, 9, 11, 13 };
	char buf[64];
	size_t d;

	/* "1,3,5,7,9,11,13" is 15 characters: 16 bytes hold it whole */
	memset(buf, 'X', sizeof buf);
	d = ct_ranges_ints(buf, 16, v, 7);
	ck_assert_str_eq(buf, "1,3,5,7,9,11,13");
	ck_assert_uint_eq(d, 7);
	/* one byte less: cut after a whole item, marked, inside the buffer */
	memset(buf, 'X', sizeof buf);
	d = ct_ranges_ints(buf, 15, v, 7);
	ck_assert_str_eq(buf, "1,3,5,7,9,...");
	ck_assert_uint_eq(d, 7);
	ck_assert_int_eq(buf[15], 'X');
	for (size_t size = 1; size < 16; size++) {
		memset(buf, 'X', sizeof buf);
		ct_ranges_ints(buf, size, v, 7);
		ck_assert_uint_lt(strlen(buf), size);
		ck_assert_int_eq(buf[size], 'X');
		if (size >= 4)
			ck_assert_msg(strstr(buf, "...") != NULL, "size %zu: '%s' not marked", size, buf);
	}
	int64_t big[] = { 123456789, 987654321 };
	ct_ranges_ints(buf, 6, big, 2);
	ck_assert_str_eq(buf, "...");
	ct_ranges_ints(buf, 0, big, 2); /* nothing written, no crash */
}
END_TEST

static const char *hosts(const char **h, size_t n, size_t *distinct)
{
	static char buf[4096];
	size_t d = ct_ranges_hosts(buf, sizeof buf, h, n);
	if (distinct)
		*distinct = d;
	return buf;
}

START_TEST(t_hosts)
{
	static char names[64][16];
	const char *h[80];
	size_t d;

	for (int i = 0; i < 64; i++) {
		snprintf(names[i], sizeof names[i], "node%02d", 64 - i);
		h[i] = names[i];
	}
	h[64] = names[0]; /* a duplicate */
	ck_assert_str_eq(hosts(h, 65, &d), "node[01-64]");
	ck_assert_uint_eq(d, 64);

	const char *a[] = { "gpu7", "login1", "gpu2", "gpu1", "gpu3" };
	ck_assert_str_eq(hosts(a, 5, &d), "gpu[1-3,7],login1");
	ck_assert_uint_eq(d, 5);

	const char *b[] = { "n9", "n10", "n11" };
	ck_assert_str_eq(hosts(b, 3, NULL), "n[9-11]");
	const char *c[] = { "n08", "n10", "n09", "n100" };
	ck_assert_str_eq(hosts(c, 4, NULL), "n[08-10,100]");
	/* n1 cannot be written in n001's width */
	const char *e[] = { "n001", "n1", "n002" };
	ck_assert_str_eq(hosts(e, 3, NULL), "n[001-002],n1");
	/* the last run of digits; the suffix stays */
	const char *f[] = { "rack1-n2.ib", "rack1-n1.ib", "rack2-n1.ib", "rack1-n3.ib" };
	ck_assert_str_eq(hosts(f, 4, NULL), "rack1-n[1-3].ib,rack2-n1.ib");
	/* no digits, alone, empty, NULL */
	const char *g[] = { "vm", NULL, "alpha", "vm", "", "x5" };
	ck_assert_str_eq(hosts(g, 6, &d), "alpha,vm,x5");
	ck_assert_uint_eq(d, 3);
	const char *one[] = { "node-7" };
	ck_assert_str_eq(hosts(one, 1, &d), "node-7");
	ck_assert_str_eq(hosts(one, 0, &d), "");
	ck_assert_uint_eq(d, 0);
	/* a number too long to be one is part of the name */
	const char *l[] = { "h1234567890123456789012", "h1234567890123456789013" };
	ck_assert_str_eq(hosts(l, 2, NULL), "h1234567890123456789012,h1234567890123456789013");
}
END_TEST

START_TEST(t_hosts_cut)
{
	const char *h[] = { "a1", "a3", "a5", "a7", "b1", "b2" };
	char buf[64];

	ct_ranges_hosts(buf, sizeof buf, h, 6);
	ck_assert_str_eq(buf, "a[1,3,5,7],b[1-2]");
	/* inside a bracket: the bracket is closed */
	memset(buf, 'X', sizeof buf);
	ct_ranges_hosts(buf, 12, h, 6);
	ck_assert_str_eq(buf, "a[1,3,...]");
	for (size_t size = 1; size < 20; size++) {
		memset(buf, 'X', sizeof buf);
		ct_ranges_hosts(buf, size, h, 6);
		ck_assert_uint_lt(strlen(buf), size);
		ck_assert_int_eq(buf[size], 'X');
		if (size >= 6 && size < 18)
			ck_assert_msg(strstr(buf, "...") != NULL, "size %zu: '%s' not marked", size, buf);
		/* brackets balanced whatever the cut */
		int open = 0;
		for (const char *p = buf; *p; p++)
			open += *p == '[' ? 1 : *p == ']' ? -1 : 0;
		ck_assert_msg(open == 0 || size < 6, "size %zu: '%s'", size, buf);
	}
}
END_TEST

/* expand "p[1-3,7]s,q" back into names */
static size_t expand(const char *list, char out[][32], size_t max)
{
	size_t n = 0;
	const char *p = list;

	while (*p && n < max) {
		const char *br = NULL, *end = p;
		while (*end && *end != ',' && *end != '[')
			end++;
		if (*end != '[') {
			snprintf(out[n++], 32, "%.*s", (int)(end - p), p);
			p = *end ? end + 1 : end;
			continue;
		}
		br = end;
		const char *close = strchr(br, ']');
		const char *sfx = close + 1, *sfx_end = sfx;
		while (*sfx_end && *sfx_end != ',')
			sfx_end++;
		for (const char *r = br + 1; r < close && n < max;) {
			char *e;
			const char *d0 = r;
			long lo = strtol(r, &e, 10), hi = lo;
			int width = (int)(e - d0);
			if (*e == '-')
				hi = strtol(e + 1, &e, 10);
			for (long x = lo; x <= hi && n < max; x++)
				snprintf(out[n++], 32, "%.*s%0*ld%.*s", (int)(br - p), p,
					 d0[0] == '0' ? width : 0, x, (int)(sfx_end - sfx), sfx);
			r = *e == ',' ? e + 1 : e;
		}
		p = *sfx_end ? sfx_end + 1 : sfx_end;
	}
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

START_TEST(t_hosts_round_trip)
{
	static char names[600][32], back[700][32];
	const char *h[600];
	const char *sorted[700];
	unsigned seed = 12345;
	char buf[16384];

	for (int round = 0; round < 50; round++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % 600), d, m, u = 0;
		for (size_t i = 0; i < n; i++) {
			static const char *const pre[] = { "node", "gpu-", "r1n", "login" };
			unsigned k = (unsigned)rand_r(&seed);
			if (k % 7 == 0)
				snprintf(names[i], 32, "%s", pre[k % 4]);
			else if (k % 3 == 0)
				snprintf(names[i], 32, "%s%03u.ib", pre[k % 4], (k >> 8) % 300);
			else
				snprintf(names[i], 32, "%s%u", pre[k % 4], (k >> 8) % 300);
			h[i] = names[i];
		}
		d = ct_ranges_hosts(buf, sizeof buf, h, n);
		ck_assert_msg(!strstr(buf, "..."), "round %d cut: %s", round, buf);
		m = expand(buf, back, 700);
		ck_assert_uint_eq(m, d);
		for (size_t i = 0; i < m; i++)
			sorted[i] = back[i];
		qsort(sorted, m, sizeof *sorted, cmp_str);
		qsort(h, n, sizeof *h, cmp_str);
		for (size_t i = 0; i < n; i++)
			if (!i || strcmp(h[i], h[i - 1]))
				h[u++] = h[i];
		ck_assert_uint_eq(u, d);
		for (size_t i = 0; i < u; i++)
			ck_assert_msg(!strcmp(h[i], sorted[i]), "round %d: %s expands to %s, not %s", round,
				      buf, sorted[i], h[i]);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ranges");
	TCase *tc = tcase_create("ranges");
	tcase_add_test(tc, t_ints);
	tcase_add_test(tc, t_ints_cut);
	tcase_add_test(tc, t_hosts);
	tcase_add_test(tc, t_hosts_cut);
	tcase_add_test(tc, t_hosts_round_trip);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
