/* Driver versions: one digit reader and the shapes built on it (version.h). */
#include "version.h"

#include <stdbool.h>
#include <string.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* the digits at *p (at least one) as a number, saturated at UINT32_MAX;
 * *p moves past all of them */
static bool digits(const char **p, uint32_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!is_digit(*s))
		return false;
	for (; is_digit(*s); s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			v = UINT32_MAX + 1ull; /* stays saturated */
	}
	*p = s;
	*out = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	return true;
}

/* MAJOR.MINOR[.PATCH] at *p within the limits of a driver version code */
static bool drv_at(const char **p, uint32_t *code)
{
	const char *q = *p;
	uint32_t maj, mnr, pat = 0;

	if (!digits(&q, &maj) || maj > 4294 || *q != '.')
		return false;
	q++;
	if (!digits(&q, &mnr) || mnr > 999)
		return false;
	if (*q == '.' && is_digit(q[1])) {
		q++;
		if (!digits(&q, &pat) || pat > 999)
			return false;
	}
	*p = q;
	*code = CT_DRV(maj, mnr, pat);
	return true;
}

uint32_t ct_drv_version_parse(const char *s)
{
	uint32_t code;

	if (!s)
		return 0;
	for (const char *p = s; *p; p++) {
		const char *q = p;

		/* a token starts at a digit run's first digit */
		if (!is_digit(*p) || (p > s && is_digit(p[-1])))
			continue;
		if (drv_at(&q, &code))
			return code;
	}
	return 0;
}

int ct_version_parts(const char *s, unsigned *v, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		v[i] = 0;
	while (k < n && s && digits(&s, &v[k])) {
		k++;
		if (*s != '.' || !is_digit(s[1]))
			break;
		s++;
	}
	return k;
}

int ct_version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		uint32_t x = 0, y = 0;

		digits(&a, &x);
		digits(&b, &y);
		if (x != y)
			return x < y ? -1 : 1;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
		if (!*a && !*b)
			break;
		if (!*a || !*b)
			return *a ? 1 : -1;
	}
	return 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

int ct_parse_nvrm_version(const char *text, char *ver, size_t len, const char **flavor)
{
	const char *line = strstr(text, "NVRM version:");
	const char *p, *end;

	line = line ? line : text;
	end = strchr(line, '\n');
	if (!end)
		end = line + strlen(line);
	if (flavor) {
		const char *open = strstr(line, "Open Kernel Module"), *any = strstr(line, "Kernel Module");
		*flavor = open && open < end ? "open" : any && any < end ? "proprietary" : "unknown";
	}
	p = strstr(line, "Kernel Module");
	if (!p || p > end)
		p = line;
	if (len)
		ver[0] = 0;
	for (; p < end; p++) {
		const char *q = p;
		int dots = 0;

		if (!is_digit(*p) || (p > line && !blank(p[-1])))
			continue;
		while (q < end && (is_digit(*q) || *q == '.')) {
			if (*q == '.' && !is_digit(q[1]))
				break;
			dots += *q == '.';
			q++;
		}
		if (dots < 1 || dots > 2 || (q < end && !blank(*q) && *q != '\r'))
			continue;
		if ((size_t)(q - p) >= len)
			return -1;
		memcpy(ver, p, (size_t)(q - p));
		ver[q - p] = 0;
		return 0;
	}
	return -1;
}

int ct_version_from_name(const char *path, char *buf, size_t len)
{
	const char *b = strrchr(path, '/');
	const char *so;
	size_t n;

	b = b ? b + 1 : path;
	so = strstr(b, ".so.");
	if (!so || !is_digit(so[4]))
		return -1;
	so += 4;
	n = strspn(so, "0123456789.");
	if (n == 0 || n >= len)
		return -1;
	memcpy(buf, so, n);
	buf[n] = 0;
	while (n > 0 && buf[n - 1] == '.') /* "libx.so.1." */
		buf[--n] = 0;
	return n ? 0 : -1;
}
