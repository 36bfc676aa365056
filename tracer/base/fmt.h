/* ct_snprintf: snprintf's output, cheaper (fmt.c). */
#ifndef CT_FMT_H
#define CT_FMT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

int ct_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int ct_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* append to the string in buf (size bytes), cut at its end */
void ct_appendf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* copy at most n bytes of src (up to a NUL) into dst as a string of at most
 * dlen - 1 printable ASCII characters, '?' for the others */
void ct_copy_printable(char *dst, size_t dlen, const unsigned char *src, size_t n);

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

/* the 8 hex digits of v, most significant first, as a little-endian word */
static inline uint64_t ct_hex8(uint32_t v)
{
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t x = v;

	/* one nibble a byte, the lowest in the lowest byte */
	x = (x | x << 16) & 0x0000ffff0000ffffull;
	x = (x | x << 8) & 0x00ff00ff00ff00ffull;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
	/* '0' + n, and 'a' - '0' - 10 more for each nibble over 9 */
	x += ones * '0' + (((x + ones * 6) >> 4) & ones) * ('a' - '0' - 10);
	return __builtin_bswap64(x);
}

/* (all the digits are built at once, stored as 8 or 16 of them: the
 * leading zeros before the start returned are written too) */
static inline char *ct_uhex_rev(char *end, uint64_t v)
{
	uint64_t w = ct_hex8((uint32_t)v);

	memcpy(end - 8, &w, 8);
	if (v >> 32) {
		w = ct_hex8((uint32_t)(v >> 32));
		memcpy(end - 16, &w, 8);
	}
	return end - (v ? (67 - __builtin_clzll(v)) / 4 : 1);
}

/* 8 bytes at a time: bit 7 of each byte outside printable ASCII or a '"'
 * or '\\' (what JSON and C-style quoting escape: < 0x20, '"', '\\',
 * >= 0x7f) is set in the mask; a byte after the first such byte may be
 * marked too (a borrow), the lowest mark is exact */
static inline uint64_t ct_marks8(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t lt20 = (w - ones * 0x20) & ~w;               /* < 0x20 */
	uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
	uint64_t eq = ((q - ones) & ~q) | ((bs - ones) & ~bs); /* == '"' or '\\' */
	uint64_t hi = (w + ones * 0x01) | w;                   /* >= 0x7f: 0x7f+1 sets bit 7 */
	return (lt20 | eq | hi) & high;
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "ct_short_word assumes little-endian");

/* s's n bytes, n < 8, as a word (little-endian) whose other bytes are a
 * plain 'a': loads that stay inside s, no call */
static inline uint64_t ct_short_word(const unsigned char *s, size_t n)
{
	uint64_t w = 0x6161616161616161ull << (8 * n);
	uint32_t a, b;

	if (n >= 4) {
		/* two overlapping halves: the shared bytes are the same */
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		return w | a | (uint64_t)b << (8 * (n - 4));
	}
	if (n)
		w |= s[0] | (uint64_t)s[n / 2] << (8 * (n / 2)) | (uint64_t)s[n - 1] << (8 * (n - 1));
	return w;
}

#ifdef __SSE2__
#include <emmintrin.h>
/* bit k set for each of the 16 bytes of v outside printable ASCII or a '"'
 * or '\\' (what JSON and C-style quoting escape): one signed compare of
 * v + 1 < 0x21 takes both ends, < 0x20 and 0x7f..0xff (which wrap to
 * 0x80..0x00) */
static inline unsigned ct_marks16(__m128i v)
{
	__m128i bad = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8(1)), _mm_set1_epi8(0x21));

	bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
	bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
	return (unsigned)_mm_movemask_epi8(bad);
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

	/* a literal's copy stays a few moves of its known length when it
	 * fits, as it nearly always does; only a cut copies room bytes */
	if (__builtin_expect(n <= room, 1)) {
		memcpy(b->p, s, n);
		b->p += n;
	} else {
		memcpy(b->p, s, room);
		b->p += room;
	}
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
