/*
 * Sets written short (ranges.h): numbers as ranges, host names as a
 * hostlist.  A job summary of 4096 processes names its ranks "0-4095" and
 * its hosts "node[01-64]" instead of listing them.
 */
#include "ranges.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a bounded writer that cuts at whole items ----------------------------- */

struct rw {
	char *buf;
	size_t size, len;
	size_t safe; /* where a cut may go: after a whole item, its marker fits */
	const char *safe_mark;
	bool in_bracket;
	bool full;
};

static void rw_init(struct rw *w, char *buf, size_t size)
{
	memset(w, 0, sizeof *w);
	w->buf = buf;
	w->size = size;
	w->safe_mark = "...";
	if (size)
		buf[0] = '\0';
}

/* the last item did not fit: cut back to the last safe place and mark it */
static void rw_cut(struct rw *w)
{
	size_t m = strlen(w->safe_mark);

	w->full = true;
	w->len = w->safe;
	if (w->len + m >= w->size)
		m = w->size > w->len ? w->size - w->len - 1 : 0;
	memcpy(w->buf + w->len, w->safe_mark, m);
	w->len += m;
	if (w->size)
		w->buf[w->len] = '\0';
}

/* one whole item (its separator included) */
static void rw_item(struct rw *w, const char *s, size_t n)
{
	const char *mark;

	if (w->full)
		return;
	if (w->len + n >= w->size) {
		rw_cut(w);
		return;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
	mark = w->in_bracket ? ",...]" : ",...";
	if (w->len + strlen(mark) < w->size) {
		w->safe = w->len;
		w->safe_mark = mark;
	}
}

/* ---- numbers ----------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* "lo" or "lo-hi", zero-padded to width digits (0: as they come) */
static size_t range_text(char *t, size_t tlen, int64_t lo, int64_t hi, int width)
{
	int k = lo == hi ? snprintf(t, tlen, "%0*lld", width, (long long)lo)
			 : snprintf(t, tlen, "%0*lld-%0*lld", width, (long long)lo, width, (long long)hi);
	return k < 0 ? 0 : (size_t)k < tlen ? (size_t)k : tlen - 1;
}

/* the ranges of sorted distinct values, each item preceded by sep_first for
 * the first and "," for the others */
static void put_ranges(struct rw *w, const int64_t *v, size_t n, int width, const char *first)
{
	char t[128];

	for (size_t i = 0; i < n && !w->full;) {
		size_t j = i;
		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		size_t k = (size_t)snprintf(t, sizeof t, "%s", i ? "," : first);
		k += range_text(t + k, sizeof t - k, v[i], v[j], width);
		rw_item(w, t, k);
		i = j + 1;
	}
}

size_t ct_ranges_ints(char *buf, size_t size, int64_t *v, size_t n)
{
	struct rw w;
	size_t d = 0;

	rw_init(&w, buf, size);
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp_i64);
	for (size_t i = 0; i < n; i++)
		if (!d || v[i] != v[d - 1])
			v[d++] = v[i];
	put_ranges(&w, v, d, 0, "");
	return d;
}

/* ---- host names ---------------------------------------------------------------- */

/* a name split around its last run of digits: prefix, number, suffix */
struct hname {
	const char *s;
	size_t plen; /* prefix length (the whole name when there is no number) */
	size_t dlen; /* digits, 0: no number */
	int width;   /* zero-padded width, 0: not padded */
	int64_t val;
};

static void hsplit(const char *s, struct hname *h)
{
	size_t n = strlen(s), e = n;

	memset(h, 0, sizeof *h);
	h->s = s;
	h->plen = n;
	while (e > 0 && (s[e - 1] < '0' || s[e - 1] > '9'))
		e--;
	size_t b = e;
	while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9')
		b--;
	if (e == b || e - b > 18)
		return;
	h->plen = b;
	h->dlen = e - b;
	h->width = s[b] == '0' && e - b > 1 ? (int)(e - b) : 0;
	for (size_t i = b; i < e; i++)
		h->val = h->val * 10 + (s[i] - '0');
}

static int cmp_part(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);
	return c ? c : (an > bn) - (an < bn);
}

/* one group: the same prefix and suffix around a number (names without a
 * number are each their own) */
static bool same_group(const struct hname *a, const struct hname *b)
{
	return a->dlen && b->dlen && !cmp_part(a->s, a->plen, b->s, b->plen) &&
	       !strcmp(a->s + a->plen + a->dlen, b->s + b->plen + b->dlen);
}

/* a member is written as its group's number in the group's width: a padded
 * one of exactly that width, an unpadded one of at least as many digits */
static bool fits_width(const struct hname *h, int width)
{
	return h->width ? h->width == width : (int)h->dlen >= width;
}

static int cmp_host(const void *pa, const void *pb)
{
	const char *sa = *(const char *const *)pa, *sb = *(const char *const *)pb;
	struct hname a, b;
	int c;

	hsplit(sa, &a);
	hsplit(sb, &b);
	if ((c = cmp_part(a.s, a.plen, b.s, b.plen)))
		return c;
	if ((c = strcmp(a.s + a.plen + a.dlen, b.s + b.plen + b.dlen)))
		return c;
	if ((c = (a.dlen > 0) - (b.dlen > 0)))
		return c;
	if ((c = (a.val > b.val) - (a.val < b.val)))
		return c;
	return strcmp(sa, sb);
}

size_t ct_ranges_hosts(char *buf, size_t size, const char **hosts, size_t n)
{
	struct rw w;
	size_t d = 0;
	int64_t *vals;

	rw_init(&w, buf, size);
	for (size_t i = 0; i < n; i++)
		if (hosts[i] && hosts[i][0])
			hosts[d++] = hosts[i];
	n = d;
	if (!n)
		return 0;
	qsort(hosts, n, sizeof *hosts, cmp_host);
	d = 0;
	for (size_t i = 0; i < n; i++)
		if (!d || strcmp(hosts[i], hosts[d - 1]))
			hosts[d++] = hosts[i];
	vals = malloc(d * sizeof *vals);
	for (size_t i = 0; i < d && !w.full;) {
		struct hname a, b;
		size_t j = i + 1;

		hsplit(hosts[i], &a);
		for (; j < d; j++) {
			hsplit(hosts[j], &b);
			if (!same_group(&a, &b))
				break;
		}
		/* the group's width: its zero-padded members' (n[08-10]) */
		int width = 0;
		size_t nv = 0;
		for (size_t k = i; k < j && j > i + 1; k++) {
			hsplit(hosts[k], &b);
			if (b.width > width)
				width = b.width;
		}
		for (size_t k = i; k < j && j > i + 1 && vals; k++) {
			hsplit(hosts[k], &b);
			if (fits_width(&b, width) && (!nv || vals[nv - 1] != b.val))
				vals[nv++] = b.val;
		}
		if (nv > 1) {
			char first[300];
			const char *suffix = a.s + a.plen + a.dlen;
			int m = snprintf(first, sizeof first, "%s%.*s[", w.len ? "," : "", (int)a.plen, a.s);
			if (m < 0 || (size_t)m >= sizeof first)
				first[sizeof first - 1] = '\0';
			w.in_bracket = true;
			put_ranges(&w, vals, nv, width, first);
			w.in_bracket = false;
			char t[300];
			m = snprintf(t, sizeof t, "]%s", suffix);
			rw_item(&w, t, m < 0 ? 0 : (size_t)m < sizeof t ? (size_t)m : sizeof t - 1);
		}
		/* the others as they are: alone, or not in the group's width */
		for (size_t k = i; k < j; k++) {
			char t[320];
			if (nv > 1) {
				hsplit(hosts[k], &b);
				if (fits_width(&b, width))
					continue;
			}
			int m = snprintf(t, sizeof t, "%s%s", w.len ? "," : "", hosts[k]);
			rw_item(&w, t, m < 0 ? 0 : (size_t)m < sizeof t ? (size_t)m : sizeof t - 1);
		}
		i = j;
	}
	free(vals);
	return d;
}
