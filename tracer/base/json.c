#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "fmt.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
#define vsnprintf ct_vsnprintf

/*
 * Output goes through the FILE's own buffer with the unlocked stdio calls:
 * one lock-free putc per byte and fwrite for runs.  `cutrace show --json`
 * writes hundreds of MB for a big trace, so this is the reader's hot path.
 * Callers may still fprintf to the same FILE between calls.
 */
/* the writer's buffer stands in for the FILE: f below is the ct_json */
#define FLUSH_AT CT_JSON_FLUSH_AT

void ct_json_flush(struct ct_json *j)
{
	if (j->len) {
		fwrite_unlocked(j->buf, 1, j->len, j->f);
		j->len = 0;
	}
}

static inline void put_c(struct ct_json *j, char c)
{
	if (j->len >= FLUSH_AT)
		ct_json_flush(j);
	j->buf[j->len++] = c;
}

static void put_str(struct ct_json *j, const char *s, size_t n)
{
	if (j->len + n > FLUSH_AT) {
		ct_json_flush(j);
		if (n > FLUSH_AT) {
			fwrite_unlocked(s, 1, n, j->f);
			return;
		}
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}
#define PUT(c, jj) put_c((jj), (c))

/* how many decimal digits v >= 10 has: log2 * 1233 / 4096 is log10, or one
 * below it (the powers of ten settle which) */
static inline size_t udec_len(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
	};
	unsigned t = ((unsigned)(64 - __builtin_clzll(v)) * 1233) >> 12;

	return t + (v >= pow10[t]);
}

static inline void put_u64(struct ct_json *f, uint64_t v)
{
	char b[24], *p;

	if (v < 10 && f->len < FLUSH_AT) {
		f->buf[f->len++] = (char)('0' + v);
		return;
	}
	/* with room in the buffer, the digits are written in place, counted
	 * first: no copy */
	if (f->len + 20 <= FLUSH_AT) {
		size_t n = udec_len(v);
		ct_udec_rev(f->buf + f->len + n, v);
		f->len += n;
		return;
	}
	p = ct_udec_rev(b + sizeof b, v);
	put_str(f, p, (size_t)(b + sizeof b - p));
}

void ct_json_init(struct ct_json *j, FILE *f, bool pretty)
{
	j->f = f;
	j->len = 0;
	j->depth = 0;
	j->pretty = pretty;
	j->first[0] = true;
	j->after_key = false;
}

static void indent(struct ct_json *j)
{
	static const char spaces[] = "                                                                ";

	if (!j->pretty)
		return;
	PUT('\n', j);
	size_t n = 2 * (size_t)j->depth;

	put_str(j, spaces, n < sizeof spaces - 1 ? n : sizeof spaces - 1);
}

/* separator before a value or a key at the current level */
static inline void sep(struct ct_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		PUT(',', j);
	j->first[j->depth] = false;
	if (j->pretty && j->depth > 0)
		indent(j);
}

static void open_(struct ct_json *j, char c)
{
	sep(j);
	PUT(c, j);
	if (j->depth + 1 < CT_JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct ct_json *j, char c)
{
	bool empty = j->first[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (!empty)
		indent(j);
	PUT(c, j);
	/* a finished top-level value goes out at once */
	if (j->depth == 0)
		ct_json_flush(j);
}

void ct_json_obj_begin(struct ct_json *j) { open_(j, '{'); }
void ct_json_obj_end(struct ct_json *j) { close_(j, '}'); }
void ct_json_arr_begin(struct ct_json *j) { open_(j, '['); }
void ct_json_arr_end(struct ct_json *j) { close_(j, ']'); }

static inline bool word_plain(uint64_t w)
{
	return !ct_marks8(w);
}

/* bytes a JSON string cannot hold as they are: < 0x20, '"', '\\', >= 0x7f */
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
static const unsigned char needs_escape[256] = {
	R16(1), R16(1),                                            /* 0x00-0x1f */
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,             /* 0x20-0x2f: '"' */
	R16(0), R16(0),                                            /* 0x30-0x4f */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,             /* 0x50-0x5f: '\\' */
	R16(0),                                                    /* 0x60-0x6f */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,             /* 0x70-0x7f: DEL */
	R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1),  /* 0x80-0xff */
};
#undef R16

#ifdef __SSE2__
/* copy_plain for n >= 16: 16 bytes at a time */
static inline size_t copy_plain16(char *o, const unsigned char *s, size_t n)
{
	__m128i v;
	size_t i;

	for (i = 0; i + 16 < n; i += 16) {
		v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		if (ct_marks16(v))
			return i;
		_mm_storeu_si128((__m128i *)(void *)(o + i), v);
	}
	v = _mm_loadu_si128((const __m128i *)(const void *)(s + n - 16));
	if (ct_marks16(v))
		return i;
	_mm_storeu_si128((__m128i *)(void *)(o + n - 16), v);
	return n;
}
#endif

/*
 * Copy s's n bytes to o while none of them needs escaping, 8 at a time (16
 * with SSE2; the last, overlapping word for the tail): one pass instead of a
 * check and a copy.  o needs room for n + 8 bytes (whole words are stored).
 * Returns how many bytes were copied: n, or where the first word that needs
 * escaping starts (the bytes before it are copied and plain).
 */
static inline size_t copy_plain(char *o, const unsigned char *s, size_t n)
{
	uint64_t w;
	size_t i;

#ifdef __SSE2__
	if (n >= 16)
		return copy_plain16(o, s, n);
#endif
	if (n < 8) {
		w = ct_short_word(s, n);
		if (!word_plain(w))
			return 0;
		memcpy(o, &w, 8);
		return n;
	}
	for (i = 0; i + 8 < n; i += 8) {
		memcpy(&w, s + i, 8);
		if (!word_plain(w))
			return i;
		memcpy(o + i, &w, 8);
	}
	memcpy(&w, s + n - 8, 8);
	if (!word_plain(w))
		return i;
	memcpy(o + n - 8, &w, 8);
	return n;
}

/* s escaped, without quotes */
static void put_escaped_from(struct ct_json *f, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0, i = 0;

	while (i < n) {
		uint64_t w, m;
		if (i + 8 <= n) {
			memcpy(&w, s + i, 8);
			m = ct_marks8(w);
			if (!m) {
				i += 8;
				continue;
			}
			/* on to the first byte that needs escaping (little-endian) */
			i += (size_t)__builtin_ctzll(m) / 8;
		}
		unsigned char c = s[i];
		if (!needs_escape[c]) {
			i++;
			continue;
		}
		/* flush the plain run before the byte that needs escaping */
		put_str(f, (const char *)s + run, i - run);
		run = ++i;
		switch (c) {
		case '"': put_str(f, "\\\"", 2); break;
		case '\\': put_str(f, "\\\\", 2); break;
		case '\n': put_str(f, "\\n", 2); break;
		case '\r': put_str(f, "\\r", 2); break;
		case '\t': put_str(f, "\\t", 2); break;
		default:
			/* bytes outside printable ASCII are escaped one by one so
			 * that arbitrary program bytes still give valid JSON */
			put_str(f, "\\u00", 4);
			PUT(hex[c >> 4], f);
			PUT(hex[c & 15], f);
		}
	}
	put_str(f, (const char *)s + run, n - run);
}

/* the escape of byte c (one that needs it) at o; returns the end */
static inline char *escape_byte(char *o, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";

	*o++ = '\\';
	switch (c) {
	case '"': *o++ = '"'; break;
	case '\\': *o++ = '\\'; break;
	case '\n': *o++ = 'n'; break;
	case '\r': *o++ = 'r'; break;
	case '\t': *o++ = 't'; break;
	default:
		memcpy(o, "u00", 3);
		o[3] = hex[c >> 4];
		o[4] = hex[c & 15];
		o += 5;
	}
	return o;
}

/*
 * s's n bytes escaped into room made for the worst case (6 bytes each, plus
 * a whole vector): 16 bytes a step up to the next byte that needs escaping,
 * the rest one by one.  With at_nul (a constant in each caller) a NUL ends
 * the string instead of being escaped.  Returns the end of what it wrote.
 */
static inline __attribute__((always_inline)) char *escape_into(char *o, const unsigned char *s, size_t n,
							       bool at_nul)
{
	size_t i = 0;

#ifdef __SSE2__
	while (i + 16 <= n) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		unsigned m = ct_marks16(v);
		_mm_storeu_si128((__m128i *)(void *)o, v);
		if (!m) {
			i += 16;
			o += 16;
			continue;
		}
		unsigned k = (unsigned)__builtin_ctz(m);
		if (at_nul && !s[i + k])
			return o + k;
		o = escape_byte(o + k, s[i + k]);
		i += k + 1;
	}
#endif
	for (; i < n && (!at_nul || s[i]); i++) {
		if (needs_escape[s[i]])
			o = escape_byte(o, s[i]);
		else
			*o++ = (char)s[i];
	}
	return o;
}

#ifdef __SSE2__
/* put_escaped_from with room in the buffer for the worst case: written in
 * place (out of line: put_escaped_bytes stays small) */
static void put_escaped_room(struct ct_json *f, const unsigned char *s, size_t n)
{
	f->len = (size_t)(escape_into(f->buf + f->len, s, n, false) - f->buf);
}
#endif

/* s's n bytes, escaped as needed, without quotes */
static inline void put_escaped_bytes(struct ct_json *f, const unsigned char *s, size_t n)
{
	size_t k = 0;

	/* most strings need no escaping: copied as they are checked */
	if (f->len + n + 8 <= FLUSH_AT) {
		k = copy_plain(f->buf + f->len, s, n);
		f->len += k;
		if (k == n)
			return;
#ifdef __SSE2__
		if (n <= FLUSH_AT / 8 && f->len + 6 * (n - k) + 16 <= FLUSH_AT) {
			put_escaped_room(f, s + k, n - k);
			return;
		}
#endif
	}
	put_escaped_from(f, s + k, n - k);
}

static void put_escaped(struct ct_json *f, const unsigned char *s, size_t n)
{
	PUT('"', f);
	put_escaped_bytes(f, s, n);
	PUT('"', f);
}

/* s's n bytes as they are (the caller knows that none needs escaping) */
static inline void put_plain(struct ct_json *f, const char *s, size_t n)
{
	uint64_t w;

	if (f->len + n + 8 > FLUSH_AT || n > 16) {
		put_str(f, s, n);
		return;
	}
	/* short table names: two words at most, no call */
	char *o = f->buf + f->len;
	if (n < 8) {
		w = ct_short_word((const unsigned char *)s, n);
		memcpy(o, &w, 8);
	} else {
		memcpy(&w, s, 8);
		memcpy(o, &w, 8);
		memcpy(&w, s + n - 8, 8);
		memcpy(o + n - 8, &w, 8);
	}
	f->len += n;
}

void ct_json_str_begin(struct ct_json *j)
{
	sep(j);
	PUT('"', j);
}

void ct_json_str_add(struct ct_json *j, const char *s, size_t n)
{
	put_escaped_bytes(j, (const unsigned char *)s, n);
}

void ct_json_str_add_plain(struct ct_json *j, const char *s, size_t n)
{
	put_plain(j, s, n);
}

void ct_json_strn_plain(struct ct_json *j, const char *s, size_t n)
{
	if (!j->pretty && n <= 64 && j->len + n + 16 <= FLUSH_AT) {
		/* a compact table name: one room check, separator, quotes and
		 * the name (word copies, the last one overlapping) in place */
		char *o = j->buf + j->len;
		if (j->after_key) {
			j->after_key = false;
		} else {
			if (!j->first[j->depth])
				*o++ = ',';
			j->first[j->depth] = false;
		}
		*o++ = '"';
		if (n < 8) {
			uint64_t w = ct_short_word((const unsigned char *)s, n);
			memcpy(o, &w, 8);
		} else if (n <= 16) {
			memcpy(o, s, 8);
			memcpy(o + n - 8, s + n - 8, 8);
		} else {
			for (size_t i = 0; i + 16 < n; i += 16)
				memcpy(o + i, s + i, 16);
			memcpy(o + n - 16, s + n - 16, 16);
		}
		o[n] = '"';
		j->len = (size_t)(o + n + 1 - j->buf);
		return;
	}
	sep(j);
	PUT('"', j);
	put_plain(j, s, n);
	PUT('"', j);
}

void ct_json_str_plain(struct ct_json *j, const char *s)
{
	if (!s) {
		ct_json_null(j);
		return;
	}
	ct_json_strn_plain(j, s, strlen(s));
}

void ct_json_str_end(struct ct_json *j)
{
	PUT('"', j);
}

void ct_json_key_plain_slow(struct ct_json *j, const char *key, size_t n)
{
	sep(j);
	if (j->len + n + 4 <= FLUSH_AT) {
		char *o = j->buf + j->len;
		o[0] = '"';
		memcpy(o + 1, key, n);
		o[n + 1] = '"';
		o[n + 2] = ':';
		j->len += n + 3;
	} else {
		PUT('"', j);
		put_str(j, key, n);
		PUT('"', j);
		PUT(':', j);
	}
	if (j->pretty)
		PUT(' ', j);
	j->after_key = true;
}

void ct_json_key_any(struct ct_json *j, const char *key)
{
	sep(j);
	put_escaped(j, (const unsigned char *)key, strlen(key));
	PUT(':', j);
	if (j->pretty)
		PUT(' ', j);
	j->after_key = true;
}

void ct_json_strn(struct ct_json *j, const char *s, size_t n)
{
	sep(j);
	put_escaped(j, (const unsigned char *)s, n);
}

void ct_json_str(struct ct_json *j, const char *s)
{
	if (!s) {
		ct_json_null(j);
		return;
	}
	ct_json_strn(j, s, __builtin_strlen(s));
}

void ct_json_int(struct ct_json *j, int64_t v)
{
	sep(j);
	if (v < 0) {
		PUT('-', j);
		put_u64(j, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(j, (uint64_t)v);
	}
}

void ct_json_uint(struct ct_json *j, uint64_t v)
{
	sep(j);
	put_u64(j, v);
}

void ct_json_hexnum(struct ct_json *j, uint64_t v)
{
	char b[24], *p;

	sep(j);
	if (j->len + 40 <= FLUSH_AT) {
		j->len = (size_t)(ct_jw_hexnum(j->buf + j->len, v) - j->buf);
		return;
	}
	b[sizeof b - 1] = '"';
	p = ct_uhex_rev(b + sizeof b - 1, v);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	put_str(j, p, (size_t)(b + sizeof b - p));
}

void ct_json_bool(struct ct_json *j, bool v)
{
	sep(j);
	if (v)
		put_str(j, "true", 4);
	else
		put_str(j, "false", 5);
}

void ct_json_null(struct ct_json *j)
{
	sep(j);
	put_str(j, "null", 4);
}

void ct_json_double(struct ct_json *j, double v)
{
	sep(j);
	if (isfinite(v))
		ct_json_rawf(j, "%.17g", v);
	else
		put_str(j, "null", 4);
}

void ct_json_hex(struct ct_json *j, const void *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *b = p;

	char buf[512];
	size_t k = 0;

	sep(j);
	PUT('"', j);
	for (size_t i = 0; i < n; i++) {
		buf[k++] = hex[b[i] >> 4];
		buf[k++] = hex[b[i] & 15];
		if (k == sizeof buf) {
			put_str(j, buf, k);
			k = 0;
		}
	}
	put_str(j, buf, k);
	PUT('"', j);
}


/* ---- direct writes (json.h) ------------------------------------------------------ */

void ct_json_value_begin(struct ct_json *j)
{
	sep(j);
}

char *ct_jw_u64_long(char *o, uint64_t v)
{
	size_t n = udec_len(v);

	ct_udec_rev(o + n, v);
	return o + n;
}

char *ct_jw_hexnum(char *o, uint64_t v)
{
	/* all the digits built at once, the leading zeros skipped: the copy
	 * takes a whole word from the first digit kept (the zeros after the
	 * digits are not counted) */
	size_t nd = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;

	memcpy(o, "\"0x", 3);
	if (v >> 32) {
		uint64_t d[4] = { ct_hex8((uint32_t)(v >> 32)), ct_hex8((uint32_t)v), 0, 0 };
		memcpy(o + 3, (const char *)d + 16 - nd, 16);
	} else {
		uint64_t d[2] = { ct_hex8((uint32_t)v), 0 };
		memcpy(o + 3, (const char *)d + 8 - nd, 8);
	}
	o[3 + nd] = '"';
	return o + nd + 4;
}

char *ct_jw_esc(struct ct_json *j, const char *o, const char *s, size_t n)
{
	j->len = (size_t)(o - j->buf);
	put_escaped_bytes(j, (const unsigned char *)s, n);
	return j->buf + j->len;
}

char *ct_jw_escz(struct ct_json *j, char *o, const char *s, size_t cap)
{
	if (cap > FLUSH_AT / 8)
		return ct_jw_esc(j, o, s, strnlen(s, cap));
	o = ct_jw_need(j, o, 6 * cap + 16);
	/* whole vectors while they stay inside the buffer: the NUL is one of
	 * the bytes marked, found as the others are escaped */
	return escape_into(o, (const unsigned char *)s, cap, true);
}

char *ct_jw_strz(struct ct_json *j, char *o, const char *s, size_t cap)
{
	o = ct_jw_need(j, o, 1);
	*o++ = '"';
	o = ct_jw_escz(j, o, s, cap);
	o = ct_jw_need(j, o, 1);
	*o++ = '"';
	return o;
}

char *ct_jw_str(struct ct_json *j, char *o, const char *s, size_t n)
{
	/* the quotes go with the string's own room check when it fits */
	if ((size_t)(o - j->buf) + n + 10 <= FLUSH_AT) {
		*o++ = '"';
		j->len = (size_t)(o - j->buf);
		put_escaped_bytes(j, (const unsigned char *)s, n);
		j->buf[j->len++] = '"'; /* put_escaped_bytes leaves FLUSH_AT - len >= 1 */
		return j->buf + j->len;
	}
	j->len = (size_t)(o - j->buf);
	put_escaped(j, (const unsigned char *)s, n);
	return j->buf + j->len;
}

char *ct_jw_hex(struct ct_json *j, const char *o, const void *p, size_t n)
{
	j->len = (size_t)(o - j->buf);
	/* ct_json_hex without its separator */
	j->after_key = true;
	ct_json_hex(j, p, n);
	return j->buf + j->len;
}

void ct_json_end(struct ct_json *j)
{
	PUT('\n', j);
	ct_json_flush(j);
}

void ct_json_raw(struct ct_json *j, const char *s, size_t n)
{
	put_str(j, s, n);
}

void ct_json_rawf(struct ct_json *j, const char *fmt, ...)
{
	char b[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b, sizeof b, fmt, ap);
	va_end(ap);
	if (n > 0)
		put_str(j, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

void ct_json_value_raw(struct ct_json *j, const char *text)
{
	ct_json_value_rawn(j, text, strlen(text));
}

void ct_json_value_rawn(struct ct_json *j, const char *text, size_t n)
{
	sep(j);
	put_plain(j, text, n);
}
