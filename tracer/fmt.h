/* ct_snprintf: snprintf's output, cheaper (fmt.c). */
#ifndef CT_FMT_H
#define CT_FMT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

int ct_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int ct_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* The decimal (hex, lower case) digits of v written backwards so that they
 * end just before `end`; returns where they start.  The buffer needs room
 * for 20 (16) of them.  The output paths' number writers. */
static inline char *ct_udec_rev(char *end, uint64_t v)
{
	/* two digits a table entry: timestamps have a dozen */
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";

	/* four digits a step while there are more: one 64-bit division */
	while (v >= 10000) {
		unsigned r = (unsigned)(v % 10000);
		v /= 10000;
		end -= 4;
		memcpy(end, pairs + 2 * (r / 100), 2);
		memcpy(end + 2, pairs + 2 * (r % 100), 2);
	}
	if (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		end -= 2;
		memcpy(end, pairs + 2 * r, 2);
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, pairs + 2 * v, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

static inline char *ct_uhex_rev(char *end, uint64_t v)
{
	do {
		*--end = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	return end;
}

#ifdef __SSE2__
#include <emmintrin.h>
/* bit k set for each of the 16 bytes of v outside printable ASCII or a '"'
 * or '\\' (what JSON and C-style quoting escape): a signed compare leaves
 * 0x20..0x7f, then '"', '\\' and DEL */
static inline unsigned ct_marks16(__m128i v)
{
	__m128i printable = _mm_cmpgt_epi8(v, _mm_set1_epi8(0x1f));
	__m128i bad = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
				   _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));

	bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f)));
	return ((unsigned)_mm_movemask_epi8(printable) ^ 0xffffu) | (unsigned)_mm_movemask_epi8(bad);
}
#endif

/*
 * A string built piece by piece in a fixed buffer, cut where snprintf would
 * cut it (what does not fit is dropped, the buffer always ends in a NUL):
 * the describe paths' "%s (%s) req 0x%x" strings without a format to parse.
 */
struct ct_sb {
	char *p;                 /* the terminating NUL */
	char *last;              /* the buffer's last byte (kept for the NUL) */
};

/* start an empty string in buf[size] (size >= 1) */
static inline void ct_sb_init(struct ct_sb *b, char *buf, size_t size)
{
	b->p = buf;
	b->last = buf + size - 1;
	*buf = 0;
}

/* continue the NUL-terminated string already in buf[size] */
static inline void ct_sb_append_to(struct ct_sb *b, char *buf, size_t size)
{
	size_t n = strnlen(buf, size - 1);

	b->p = buf + n;
	b->last = buf + size - 1;
	*b->p = 0;
}

static inline void ct_sb_mem(struct ct_sb *b, const char *s, size_t n)
{
	size_t room = (size_t)(b->last - b->p);

	if (n > room)
		n = room;
	memcpy(b->p, s, n);
	b->p += n;
	*b->p = 0;
}

static inline void ct_sb_str(struct ct_sb *b, const char *s)
{
	ct_sb_mem(b, s, strlen(s));
}

/* snprintf(dst, size, "%s", src) */
static inline void ct_str_copy(char *dst, size_t size, const char *src)
{
	struct ct_sb b;

	ct_sb_init(&b, dst, size);
	ct_sb_str(&b, src);
}

static inline void ct_sb_u64(struct ct_sb *b, uint64_t v)
{
	char nb[24], *p = ct_udec_rev(nb + sizeof nb, v);

	ct_sb_mem(b, p, (size_t)(nb + sizeof nb - p));
}

static inline void ct_sb_i64(struct ct_sb *b, int64_t v)
{
	char nb[24], *p = ct_udec_rev(nb + sizeof nb, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);

	if (v < 0)
		*--p = '-';
	ct_sb_mem(b, p, (size_t)(nb + sizeof nb - p));
}

/* lower-case hex digits, no prefix (printf's %x) */
static inline void ct_sb_hex(struct ct_sb *b, uint64_t v)
{
	char nb[24], *p = ct_uhex_rev(nb + sizeof nb, v);

	ct_sb_mem(b, p, (size_t)(nb + sizeof nb - p));
}

#endif
