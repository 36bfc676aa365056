/* Sizes and durations (parse.h): for the shim's constructor and the CLI. */
#include "parse.h"

#include <stdbool.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* the same text, ignoring ASCII case (a is lower case) */
static bool is(const char *s, const char *a)
{
	for (; *a; s++, a++)
		if ((*s | 0x20) != *a)
			return false;
	return !*s;
}

int ct_parse_size(const char *s, uint64_t *bytes)
{
	uint64_t v = 0, mul = 1;

	if (!s || !is_digit(*s))
		return -1;
	for (; is_digit(*s); s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	switch (*s | 0x20) {
	case 'k':
		mul = 1ull << 10;
		s++;
		break;
	case 'm':
		mul = 1ull << 20;
		s++;
		break;
	case 'g':
		mul = 1ull << 30;
		s++;
		break;
	default:
		if (*s)
			return -1;
	}
	if (mul > 1 && *s && !is(s, "b") && !is(s, "ib"))
		return -1;
	if (v > UINT64_MAX / mul)
		return -1;
	*bytes = v * mul;
	return 0;
}

int ct_size_check(const char *s, uint64_t *bytes)
{
	if (ct_parse_size(s, bytes) < 0)
		return -1;
	if (*bytes < CT_SIZE_MIN)
		return -2;
	if (*bytes > CT_SIZE_MAX)
		return -3;
	return 0;
}

int ct_parse_duration(const char *s, uint64_t *ns)
{
	uint64_t whole = 0, frac = 0, fscale = 1, mul;
	const char *p = s;

	if (!p || !is_digit(*p))
		return -1;
	for (; is_digit(*p); p++) {
		if (whole > 1000000000ull)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		if (!is_digit(p[1]))
			return -1; /* "1.s", "1." */
		for (p++; is_digit(*p); p++)
			if (fscale < 1000000000ull) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				fscale *= 10;
			}
	}
	if (!*p || (p[0] == 's' && !p[1]))
		mul = 1000000000ull;
	else if (p[0] == 'm' && p[1] == 's' && !p[2])
		mul = 1000000ull;
	else if (p[0] == 'u' && p[1] == 's' && !p[2])
		mul = 1000ull;
	else if (p[0] == 'n' && p[1] == 's' && !p[2])
		mul = 1;
	else if (p[0] == 'm' && !p[1])
		mul = 60000000000ull;
	else if (p[0] == 'h' && !p[1])
		mul = 3600000000000ull;
	else
		return -1;
	if (whole > UINT64_MAX / mul / 2)
		return -1;
	*ns = whole * mul + frac * mul / fscale;
	return 0;
}
