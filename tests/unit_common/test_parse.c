/* common/parse.c: one grammar for sizes and durations, and their limits. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "parse.h"

static uint64_t size_of(const char *s)
{
	uint64_t v = 12345;

	ck_assert_msg(ct_parse_size(s, &v) == 0, "'%s' is a size", s);
	return v;
}

static void not_size(const char *s)
{
	uint64_t v = 12345;

	ck_assert_msg(ct_parse_size(s, &v) == -1, "'%s' is not a size", s);
	ck_assert_uint_eq(v, 12345); /* untouched */
}

START_TEST(sizes)
{
	ck_assert_uint_eq(size_of("4096"), 4096);
	ck_assert_uint_eq(size_of("512K"), 512 << 10);
	ck_assert_uint_eq(size_of("512k"), 512 << 10);
	ck_assert_uint_eq(size_of("16M"), 16 << 20);
	/* the spelling the CLI accepted and the shim read as its default (16 MiB) */
	ck_assert_uint_eq(size_of("4MiB"), 4 << 20);
	ck_assert_uint_eq(size_of("4MB"), 4 << 20);
	ck_assert_uint_eq(size_of("4mib"), 4 << 20);
	ck_assert_uint_eq(size_of("1G"), 1ull << 30);
	ck_assert_uint_eq(size_of("3G"), 3ull << 30);
	ck_assert_uint_eq(size_of("1073741824"), 1ull << 30); /* 10 digits: the shim took 9 */
	ck_assert_uint_eq(size_of("0"), 0);
	ck_assert_uint_eq(size_of("18446744073709551615"), UINT64_MAX);
	not_size("18446744073709551616");
	not_size("17179869184G"); /* 2^64 bytes */
	not_size("");
	not_size(NULL);
	not_size(" 16M");
	not_size("16M ");
	not_size("-1");
	not_size("+16M");
	not_size("16T");
	not_size("4Mi");
	not_size("4MBB");
	not_size("4096B");
	not_size("1e9");
	not_size("0x100000");
	not_size("M");
}
END_TEST

START_TEST(size_limits)
{
	uint64_t v;

	ck_assert_int_eq(ct_size_check("256K", &v), 0);
	ck_assert_uint_eq(v, CT_SIZE_MIN);
	ck_assert_int_eq(ct_size_check("1G", &v), 0);
	ck_assert_uint_eq(v, CT_SIZE_MAX);
	ck_assert_int_eq(ct_size_check("16M", &v), 0);
	ck_assert_uint_eq(v, CT_SIZE_DEFAULT);
	ck_assert_int_eq(ct_size_check("255K", &v), -2);
	ck_assert_int_eq(ct_size_check("1", &v), -2);
	ck_assert_int_eq(ct_size_check("2G", &v), -3);
	ck_assert_int_eq(ct_size_check("1025M", &v), -3);
	ck_assert_int_eq(ct_size_check("lots", &v), -1);
}
END_TEST

static uint64_t ns_of(const char *s)
{
	uint64_t v = 7;

	ck_assert_msg(ct_parse_duration(s, &v) == 0, "'%s' is a duration", s);
	return v;
}

static void not_duration(const char *s)
{
	uint64_t v = 7;

	ck_assert_msg(ct_parse_duration(s, &v) == -1, "'%s' is not a duration", s);
	ck_assert_uint_eq(v, 7);
}

START_TEST(durations)
{
	ck_assert_uint_eq(ns_of("30"), 30000000000ull);
	ck_assert_uint_eq(ns_of("30s"), 30000000000ull);
	ck_assert_uint_eq(ns_of("250ms"), 250000000ull);
	ck_assert_uint_eq(ns_of("1.5s"), 1500000000ull);
	ck_assert_uint_eq(ns_of("100us"), 100000ull);
	ck_assert_uint_eq(ns_of("10ns"), 10ull);
	ck_assert_uint_eq(ns_of("2m"), 120000000000ull);
	ck_assert_uint_eq(ns_of("1h"), 3600000000000ull);
	ck_assert_uint_eq(ns_of("0.000000001s"), 1ull);
	ck_assert_uint_eq(ns_of("0"), 0);
	ck_assert_uint_eq(ns_of("1000000000ns"), 1000000000ull);
	not_duration("");
	not_duration(NULL);
	not_duration("soon");
	not_duration("1.s");
	not_duration("1.");
	not_duration(".5s");
	not_duration("-1s");
	not_duration("5 s");
	not_duration("5S");
	not_duration("5sec");
	not_duration("5d");
	not_duration("10000000000s"); /* more than 10^9 whole units */
	not_duration("2562048h");     /* 2^63 ns and more */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("parse");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, sizes);
	tcase_add_test(tc, size_limits);
	tcase_add_test(tc, durations);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
