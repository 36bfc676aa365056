/*
 * ct_snprintf (tracer/base/fmt.c) against the C library's snprintf: the same
 * output and the same return value, for the conversions the hot paths use
 * (with and without flags, width, precision and length modifiers), for edge
 * values, for small and zero buffer sizes, and for a few thousand random
 * combinations.
 */
#include <check.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"

#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
/* the test means to pass what the warnings warn about (a NULL %s, '0' with a precision) */
#pragma GCC diagnostic ignored "-Wformat"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wformat-overflow"
#endif

/* compare one format with one argument of each kind it may take */
#define SAME(size, ...)                                                                    \
	do {                                                                               \
		char a_[512], b_[512];                                                     \
		memset(a_, 'A', sizeof a_);                                                \
		memset(b_, 'A', sizeof b_);                                                \
		int ra_ = snprintf(a_, (size), __VA_ARGS__);                               \
		int rb_ = ct_snprintf(b_, (size), __VA_ARGS__);                            \
		ck_assert_int_eq(ra_, rb_);                                                \
		ck_assert_msg(!memcmp(a_, b_, sizeof a_), "format %s: libc '%.100s' ours '%.100s'", \
			      #__VA_ARGS__, a_, b_);                                       \
	} while (0)

static const int64_t ivals[] = { 0, 1, -1, 7, -7, 42, 100, -100, 65535, 4294967295LL, INT32_MAX,
				 INT32_MIN, INT64_MAX, INT64_MIN, 13000, 0x7f12a0013b5aLL };

START_TEST(t_plain_conversions)
{
	for (size_t k = 0; k < sizeof ivals / sizeof ivals[0]; k++) {
		int64_t v = ivals[k];
		SAME(512, "%d", (int)v);
		SAME(512, "%i", (int)v);
		SAME(512, "%u", (unsigned)v);
		SAME(512, "%x", (unsigned)v);
		SAME(512, "%X", (unsigned)v);
		SAME(512, "%o", (unsigned)v);
		SAME(512, "%ld", (long)v);
		SAME(512, "%lu", (unsigned long)v);
		SAME(512, "%lx", (unsigned long)v);
		SAME(512, "%lld", (long long)v);
		SAME(512, "%llu", (unsigned long long)v);
		SAME(512, "%llx", (unsigned long long)v);
		SAME(512, "%" PRId64 " %" PRIu64 " 0x%" PRIx64, v, (uint64_t)v, (uint64_t)v);
		SAME(512, "%hd %hu %hhd %hhu", (int)v, (unsigned)v, (int)v, (unsigned)v);
		SAME(512, "%zu %zd %jd %td", (size_t)v, (ssize_t)v, (intmax_t)v, (ptrdiff_t)v);
		SAME(512, "%p", (void *)(uintptr_t)v);
	}
	SAME(512, "%s", "hello");
	SAME(512, "%s", "");
	SAME(512, "[%s](%s)%s", "a", "bb", "ccc");
	SAME(512, "%c%c%c", 'x', 'y', 0x41);
	SAME(512, "100%% sure: %s%%", "yes");
	SAME(512, "no conversions at all");
	SAME(512, "%s", (const char *)NULL);
}
END_TEST

START_TEST(t_flags_width_precision)
{
	for (size_t k = 0; k < sizeof ivals / sizeof ivals[0]; k++) {
		int v = (int)ivals[k];
		SAME(512, "%5d|%-5d|%05d|%+d|% d|%+05d|%-+6d", v, v, v, v, v, v, v);
		SAME(512, "%.3d|%8.3d|%-8.3d|%.0d|%08.3d", v, v, v, v, v);
		SAME(512, "%#x|%#X|%#o|%#08x|%08x|%-#10x", (unsigned)v, (unsigned)v, (unsigned)v,
		     (unsigned)v, (unsigned)v, (unsigned)v);
		SAME(512, "%*d|%-*d|%.*d|%*.*d", 7, v, 7, v, 4, v, 9, 5, v);
		SAME(512, "%*d", -6, v);
		SAME(512, "%02u.%02u.%02u", (unsigned)v % 1000, 159u, 4u);
	}
	SAME(512, "%10s|%-10s|%.2s|%10.2s|%-*s|%.*s", "abc", "abc", "abc", "abc", 6, "xy", 3, "abcdef");
	SAME(512, "%.10s", "short");
	SAME(512, "%5c|%-5c", 'q', 'r');
	SAME(512, "%+11.3f ms|%.1f|%e|%g", 12.3456, 0.05, 1e10, 3.0);
}
END_TEST

START_TEST(t_small_buffers)
{
	static const char *const fmts[] = { "%s", "%d-%s", "0x%lx", "%5d", "%-8s|", "%%%%" };
	for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++)
		for (size_t size = 0; size < 12; size++) {
			if (strstr(fmts[f], "%d-"))
				SAME(size, fmts[f], -12345, "tail");
			else if (strstr(fmts[f], "lx"))
				SAME(size, fmts[f], 0xdeadbeefUL);
			else if (strstr(fmts[f], "%5d"))
				SAME(size, fmts[f], 42);
			else if (!strstr(fmts[f], "%%"))
				SAME(size, fmts[f], "abcdefghijklmnop");
			else
				SAME(size, fmts[f]);
		}
}
END_TEST

/* random flag/width/precision/length combinations over random values */
START_TEST(t_random)
{
	static const char *const flags[] = { "", "-", "0", "+", " ", "#", "-+", "0#", "+0", "- " };
	static const char *const lens[] = { "", "l", "ll", "h", "hh", "z", "j" };
	static const char conv[] = "diuxXo";
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (int n = 0; n < 5000; n++) {
		char fmt[64];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		const char *fl = flags[x % 10], *ln = lens[(x >> 8) % 7];
		int w = (int)((x >> 16) % 4) == 0 ? -1 : (int)((x >> 20) % 25);
		int p = (int)((x >> 28) % 3) == 0 ? -1 : (int)((x >> 32) % 20);
		char c = conv[(x >> 40) % 6];
		int k = snprintf(fmt, sizeof fmt, "<%%%s", fl);
		if (w >= 0)
			k += snprintf(fmt + k, sizeof fmt - (size_t)k, "%d", w);
		if (p >= 0)
			k += snprintf(fmt + k, sizeof fmt - (size_t)k, ".%d", p);
		snprintf(fmt + k, sizeof fmt - (size_t)k, "%s%c>", ln, c);
		uint64_t v = x * 0x2545F4914F6CDD1Dull >> ((x >> 44) % 64);
		size_t size = (x >> 50) % 7 == 0 ? (size_t)((x >> 53) % 16) : 512;
		if (!strcmp(ln, "ll") || !strcmp(ln, "j"))
			SAME(size, fmt, (long long)v);
		else if (!strcmp(ln, "l") || !strcmp(ln, "z"))
			SAME(size, fmt, (long)v);
		else
			SAME(size, fmt, (int)v);
	}
}
END_TEST

/* the string builder (fmt.h, ct_sb_*) cuts exactly where snprintf cuts */
START_TEST(t_string_builder)
{
	static const char *const strs[] = { "", "a", "nvidiactl", "RM_CONTROL NV2080_CTRL_CMD_GPU_GET_NAME_STRING",
					     "x (y) z" };
	static const uint64_t uv[] = { 0, 7, 10, 99, 100, 12345678901234ull, UINT64_MAX };
	static const int64_t iv[] = { 0, -1, 42, -100, INT64_MIN, INT64_MAX };

	srand(7);
	for (int round = 0; round < 20000; round++) {
		size_t size = 1 + (size_t)(rand() % 48);
		const char *s1 = strs[rand() % 5], *s2 = strs[rand() % 5];
		uint64_t u = uv[rand() % 7], h = uv[rand() % 7];
		int64_t i = iv[rand() % 6];
		char want[64], got[64];
		struct ct_sb b;

		memset(want, 'A', sizeof want);
		memset(got, 'A', sizeof got);
		snprintf(want, size, "%s %" PRIu64 "(%" PRId64 ") 0x%" PRIx64 "%.3s", s1, u, i, h, s2);
		ct_sb_init(&b, got, size);
		ct_sb_str(&b, s1);
		ct_sb_mem(&b, " ", 1);
		ct_sb_u64(&b, u);
		ct_sb_mem(&b, "(", 1);
		ct_sb_i64(&b, i);
		ct_sb_str(&b, ") 0x");
		ct_sb_hex(&b, h);
		ct_sb_mem(&b, s2, strnlen(s2, 3));
		ck_assert_msg(!memcmp(want, got, sizeof want), "size %zu: snprintf '%s' ct_sb '%s'", size, want, got);
		/* appending to what is there, and the plain copy */
		ct_sb_append_to(&b, got, size);
		ct_sb_str(&b, s2);
		snprintf(want + strlen(want), size - strlen(want), "%s", s2);
		ck_assert_str_eq(want, got);
		ct_str_copy(got, size, s1);
		snprintf(want, size, "%s", s1);
		ck_assert_str_eq(want, got);
	}
}
END_TEST

/* the JSON writer's string escaping (tracer/base/json.c: word-at-a-time checks
 * and copies, strings in pieces) against a byte-at-a-time reference */
static size_t ref_escape(char *o, const unsigned char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			o[k++] = '\\';
			o[k++] = (char)c;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			o[k++] = '\\';
			o[k++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if (c < 0x20 || c >= 0x7f) {
			k += (size_t)sprintf(o + k, "\\u00%02x", c);
		} else {
			o[k++] = (char)c;
		}
	}
	return k;
}

START_TEST(t_json_escaping)
{
	static struct ct_json j;
	static const unsigned char alphabet[] = { 'a', 'Z', '0', ' ', '"', '\\', '\n', '\r', '\t', 0x01, 0x1f,
						  0x7f, 0x80, 0xc3, 0xff, '/', '~', 0x20 };
	unsigned char s[64];
	char want[1024], *got = NULL;
	size_t gotlen = 0;

	srand(11);
	for (int round = 0; round < 50000; round++) {
		size_t n = (size_t)(rand() % 41), cut = n ? (size_t)rand() % (n + 1) : 0;
		int plain = rand() % 3 == 0; /* often no byte to escape at all */
		for (size_t i = 0; i < n; i++)
			s[i] = plain ? (unsigned char)('a' + rand() % 26)
				     : alphabet[(size_t)rand() % sizeof alphabet];
		FILE *f = open_memstream(&got, &gotlen);
		ck_assert_ptr_nonnull(f);
		ct_json_init(&j, f, false);
		ct_json_arr_begin(&j);
		ct_json_strn(&j, (const char *)s, n);
		ct_json_str_begin(&j);
		ct_json_str_add(&j, (const char *)s, cut);
		ct_json_str_add(&j, (const char *)s + cut, n - cut);
		ct_json_str_end(&j);
		ct_json_arr_end(&j);
		ct_json_flush(&j);
		fclose(f);
		size_t k = 0;
		want[k++] = '[';
		want[k++] = '"';
		size_t e = ref_escape(want + k, s, n);
		k += e;
		want[k++] = '"';
		want[k++] = ',';
		want[k++] = '"';
		memcpy(want + k, want + 2, e);
		k += e;
		want[k++] = '"';
		want[k++] = ']';
		want[k] = 0;
		ck_assert_msg(gotlen == k && !memcmp(got, want, k), "n %zu cut %zu: want %s got %.*s", n, cut, want,
			      (int)gotlen, got);
		free(got);
		got = NULL;
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fmt");
	TCase *tc = tcase_create("fmt");
	tcase_add_test(tc, t_plain_conversions);
	tcase_add_test(tc, t_flags_width_precision);
	tcase_add_test(tc, t_small_buffers);
	tcase_add_test(tc, t_random);
	tcase_add_test(tc, t_string_builder);
	tcase_add_test(tc, t_json_escaping);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
