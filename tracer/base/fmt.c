/*
 * A small snprintf for the reader's hot paths.
 *
 * Describing an event formats a dozen short strings; glibc's snprintf costs
 * about a thousand instructions a call even for "%s(%d)", which made it half
 * of `cutrace show`.  This one handles the conversions those paths use
 * (%s %c %d %i %u %x %X %o %p and %%, the flags - 0 + space #, width and
 * precision including *, the length modifiers hh h l ll j z t) and hands
 * anything else (floating point) to vsnprintf, so its output is always what
 * snprintf would print (tests/unit_reader/test_fmt.c compares them).
 */
#include "fmt.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wformat-nonliteral"

struct out {
	char *p;
	size_t room;   /* bytes still writable, keeping one for the NUL */
	size_t total;  /* what snprintf would return */
};

static void emit(struct out *o, const char *s, size_t n)
{
	size_t k = n < o->room ? n : o->room;

	memcpy(o->p, s, k);
	o->p += k;
	o->room -= k;
	o->total += n;
}

static void emit_fill(struct out *o, char c, size_t n)
{
	while (n--) {
		if (o->room) {
			*o->p++ = c;
			o->room--;
		}
		o->total++;
	}
}

/* body = the digits/text, prefix = sign or 0x, zero = pad with zeros after the prefix */
static void emit_field(struct out *o, const char *prefix, size_t plen, const char *body, size_t blen,
		       size_t zeros, int width, bool left, bool zero_pad)
{
	size_t len = plen + zeros + blen, pad = width > 0 && (size_t)width > len ? (size_t)width - len : 0;

	if (!left && !zero_pad)
		emit_fill(o, ' ', pad);
	emit(o, prefix, plen);
	if (!left && zero_pad)
		emit_fill(o, '0', pad);
	emit_fill(o, '0', zeros);
	emit(o, body, blen);
	if (left)
		emit_fill(o, ' ', pad);
}

int ct_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size ? size - 1 : 0, 0 };
	const char *f = fmt;

	while (*f) {
		const char *pct = strchr(f, '%');
		if (!pct) {
			emit(&o, f, strlen(f));
			break;
		}
		emit(&o, f, (size_t)(pct - f));
		f = pct + 1;

		/* most conversions of the hot formats are plain: %s, %d, %u, %x
		 * with an optional l or ll and no flags, width or precision */
		{
			const char *q = f;
			int l = 0;
			while (*q == 'l' && l < 2) {
				q++;
				l++;
			}
			if (*q == 's' && !l) {
				const char *s = va_arg(ap, const char *);
				if (!s)
					s = "(null)";
				emit(&o, s, strlen(s));
				f = q + 1;
				continue;
			}
			if (*q == 'd' || *q == 'u' || *q == 'x') {
				char nb[24], *p;
				uint64_t v;
				bool neg = false;
				if (*q == 'd') {
					int64_t s = l == 2 ? va_arg(ap, long long) : l ? va_arg(ap, long) : va_arg(ap, int);
					neg = s < 0;
					v = neg ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
				} else {
					v = l == 2 ? va_arg(ap, unsigned long long) : l ? va_arg(ap, unsigned long)
										: va_arg(ap, unsigned);
				}
				p = *q == 'x' ? ct_uhex_rev(nb + sizeof nb, v) : ct_udec_rev(nb + sizeof nb, v);
				if (neg)
					*--p = '-';
				emit(&o, p, (size_t)(nb + sizeof nb - p));
				f = q + 1;
				continue;
			}
		}

		bool left = false, zero = false, plus = false, space = false, alt = false;
		int width = -1, prec = -1, len = 0; /* len: -2 hh, -1 h, 0, 1 l, 2 ll/j/z/t */
		const char *spec_start = pct;
		for (;; f++) {
			if (*f == '-') left = true;
			else if (*f == '0') zero = true;
			else if (*f == '+') plus = true;
			else if (*f == ' ') space = true;
			else if (*f == '#') alt = true;
			else break;
		}
		if (*f == '*') {
			width = va_arg(ap, int);
			if (width < 0) {
				left = true;
				width = -width;
			}
			f++;
		} else if (*f >= '0' && *f <= '9') {
			width = 0;
			while (*f >= '0' && *f <= '9')
				width = width * 10 + (*f++ - '0');
		}
		if (*f == '.') {
			f++;
			prec = 0;
			if (*f == '*') {
				prec = va_arg(ap, int);
				f++;
			} else {
				while (*f >= '0' && *f <= '9')
					prec = prec * 10 + (*f++ - '0');
			}
		}
		if (*f == 'h') {
			len = -1;
			if (*++f == 'h') {
				len = -2;
				f++;
			}
		} else if (*f == 'l') {
			len = 1;
			if (*++f == 'l') {
				len = 2;
				f++;
			}
		} else if (*f == 'j' || *f == 'z' || *f == 't') {
			len = 2;
			f++;
		}
		char c = *f++;
		char num[72];
		int i = (int)sizeof num;
		switch (c) {
		case '%':
			emit(&o, "%", 1);
			break;
		case 'c': {
			char ch = (char)va_arg(ap, int);
			emit_field(&o, "", 0, &ch, 1, 0, width, left, false);
			break;
		}
		case 's': {
			const char *s = va_arg(ap, const char *);
			size_t n;
			if (!s)
				s = "(null)";
			if (prec >= 0) {
				const char *e = memchr(s, 0, (size_t)prec);
				n = e ? (size_t)(e - s) : (size_t)prec;
			} else {
				n = strlen(s);
			}
			emit_field(&o, "", 0, s, n, 0, width, left, false);
			break;
		}
		case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'p': {
			uint64_t v;
			bool neg = false;
			unsigned base = c == 'x' || c == 'X' || c == 'p' ? 16 : c == 'o' ? 8 : 10;
			const char *digits = c == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
			if (c == 'p') {
				v = (uint64_t)(uintptr_t)va_arg(ap, void *);
				if (!v) {
					emit_field(&o, "", 0, "(nil)", 5, 0, width, left, false);
					break;
				}
				alt = true;
			} else if (c == 'd' || c == 'i') {
				int64_t s = len == 2 ? va_arg(ap, long long) : len == 1 ? va_arg(ap, long) : va_arg(ap, int);
				if (len == -1)
					s = (short)s;
				else if (len == -2)
					s = ((s & 0xff) ^ 0x80) - 0x80; /* hh: the low byte, sign-extended */
				neg = s < 0;
				v = neg ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
			} else {
				v = len == 2 ? va_arg(ap, unsigned long long) : len == 1 ? va_arg(ap, unsigned long)
										 : va_arg(ap, unsigned);
				if (len == -1)
					v = (unsigned short)v;
				else if (len == -2)
					v = (unsigned char)v;
			}
			if (!(prec == 0 && v == 0))
				do {
					num[--i] = digits[v % base];
					v /= base;
				} while (v);
			size_t nd = sizeof num - (size_t)i;
			size_t zeros = prec > 0 && (size_t)prec > nd ? (size_t)prec - nd : 0;
			char pre[3];
			size_t pl = 0;
			if (neg)
				pre[pl++] = '-';
			else if ((c == 'd' || c == 'i') && plus)
				pre[pl++] = '+';
			else if ((c == 'd' || c == 'i') && space)
				pre[pl++] = ' ';
			if (alt && base == 16 && nd && num[i] != '0') {
				pre[pl++] = '0';
				pre[pl++] = c == 'X' ? 'X' : 'x';
			} else if (alt && base == 16 && c == 'p') {
				pre[pl++] = '0';
				pre[pl++] = 'x';
			} else if (alt && base == 8 && !zeros && (nd == 0 || num[i] != '0')) {
				zeros = 1;
			}
			emit_field(&o, pre, pl, num + i, nd, zeros, width, left, zero && !left && prec < 0);
			break;
		}
		default: {
			/* floating point: one conversion through libc, with the
			 * width and precision already read spelled out */
			char spec[48], tmp[512];
			int n;
			if (c == 'f' || c == 'F' || c == 'e' || c == 'E' || c == 'g' || c == 'G' ||
			    c == 'a' || c == 'A') {
				double d = va_arg(ap, double);
				int k = 0;
				spec[k++] = '%';
				if (left) spec[k++] = '-';
				if (zero) spec[k++] = '0';
				if (plus) spec[k++] = '+';
				if (space) spec[k++] = ' ';
				if (alt) spec[k++] = '#';
				k += snprintf(spec + k, sizeof spec - (size_t)k, "%s%d", "", width > 0 ? width : 0);
				if (prec >= 0)
					k += snprintf(spec + k, sizeof spec - (size_t)k, ".%d", prec);
				spec[k++] = c;
				spec[k] = 0;
				n = snprintf(tmp, sizeof tmp, spec, d);
				if (n > 0)
					emit(&o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
			} else {
				/* not a conversion we know: print it as written */
				emit(&o, spec_start, (size_t)(f - spec_start));
				if (!c)
					f--;
			}
			break;
		}
		}
	}
	if (size)
		*o.p = 0;
	return o.total > (size_t)INT32_MAX ? INT32_MAX : (int)o.total;
}

int ct_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = ct_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void ct_appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t used = strnlen(buf, size);
	va_list ap;

	if (used + 1 >= size)
		return;
	va_start(ap, fmt);
	ct_vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
}

void ct_copy_printable(char *dst, size_t dlen, const unsigned char *src, size_t n)
{
	size_t i = 0;

	if (!dlen)
		return;
	for (; i + 1 < dlen && i < n && src[i]; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? (char)src[i] : '?';
	dst[i] = '\0';
}
