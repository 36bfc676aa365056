/*
 * A small streaming JSON writer: correct escaping, commas and nesting, no
 * allocation.  Used by show --json, the chrome exporter and doctor --json.
 */
#ifndef CT_JSON_H
#define CT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CT_JSON_MAX_DEPTH 32

#define CT_JSON_BUF 65536
/* the buffer is written out when it holds more than this */
#define CT_JSON_FLUSH_AT (CT_JSON_BUF - 64)

struct ct_json {
	FILE *f;
	int depth;
	bool pretty;
	bool first[CT_JSON_MAX_DEPTH]; /* no element written yet at this level */
	bool after_key;
	/* output is collected here and written to f in big pieces; write to f
	 * directly only after ct_json_flush() (or use ct_json_raw) */
	size_t len;
	char buf[CT_JSON_BUF];
};

void ct_json_init(struct ct_json *j, FILE *f, bool pretty);
void ct_json_obj_begin(struct ct_json *j);
void ct_json_obj_end(struct ct_json *j);
void ct_json_arr_begin(struct ct_json *j);
void ct_json_arr_end(struct ct_json *j);
/* a key, escaped as needed; ct_json_key_plain: the caller knows that none of
 * its n bytes needs escaping (the literal keys of our own code) */
void ct_json_key_any(struct ct_json *j, const char *key);
void ct_json_key_plain_slow(struct ct_json *j, const char *key, size_t n);
/* n bytes from s to o with a few overlapping moves, no call, for the short
 * strings of keys; only o[0..n) is written */
static inline __attribute__((always_inline)) void ct_json_copy_short(char *o, const char *s, size_t n)
{
	if (n > 32)
		__builtin_memcpy(o, s, n);
	else if (n >= 16) {
		__builtin_memcpy(o, s, 16);
		__builtin_memcpy(o + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		__builtin_memcpy(o, s, 8);
		__builtin_memcpy(o + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		__builtin_memcpy(o, s, 4);
		__builtin_memcpy(o + n - 4, s + n - 4, 4);
	} else if (n) {
		o[0] = s[0];
		o[n / 2] = s[n / 2];
		o[n - 1] = s[n - 1];
	}
}
/* inside a compact object (one event of show --json, the Chrome export)
 * with room in the buffer a plain key is a few stores here, without a
 * call: a big trace writes tens of millions of keys */
static inline __attribute__((always_inline)) void ct_json_key_plain(struct ct_json *j, const char *key, size_t n)
{
	if (j->pretty || j->after_key || j->len + n + 4 > CT_JSON_FLUSH_AT) {
		ct_json_key_plain_slow(j, key, n);
		return;
	}
	char *o = j->buf + j->len;
	if (!j->first[j->depth])
		*o++ = ',';
	j->first[j->depth] = false;
	*o++ = '"';
	ct_json_copy_short(o, key, n);
	o += n;
	*o++ = '"';
	*o++ = ':';
	j->len = (size_t)(o - j->buf);
	j->after_key = true;
}
/* keys written as string literals (every key of cutrace's own output) take
 * the plain path with a length known at compile time, so that the copy is
 * inlined too */
static inline __attribute__((always_inline)) void ct_json_key(struct ct_json *j, const char *key)
{
	if (!__builtin_constant_p(__builtin_strlen(key))) {
		ct_json_key_any(j, key);
		return;
	}
	ct_json_key_plain(j, key, __builtin_strlen(key));
}
void ct_json_str(struct ct_json *j, const char *s);            /* NULL -> null */
void ct_json_strn(struct ct_json *j, const char *s, size_t n); /* bytes, escaped */
/* one string value written in pieces, each escaped, without building it
 * first: ct_json_str_begin, any number of ct_json_str_add, ct_json_str_end */
void ct_json_str_begin(struct ct_json *j);
void ct_json_str_add(struct ct_json *j, const char *s, size_t n);
void ct_json_str_end(struct ct_json *j);
/* the same for strings known not to need escaping (names from cutrace's
 * own tables, numbers it formatted): written without the check */
void ct_json_str_plain(struct ct_json *j, const char *s);            /* NULL -> null */
void ct_json_strn_plain(struct ct_json *j, const char *s, size_t n);
void ct_json_str_add_plain(struct ct_json *j, const char *s, size_t n);
void ct_json_int(struct ct_json *j, int64_t v);
void ct_json_uint(struct ct_json *j, uint64_t v);
/* v as the string "0x..." in lower-case hex ("0x" PRIx64; 0 is "0x0") */
void ct_json_hexnum(struct ct_json *j, uint64_t v);
void ct_json_bool(struct ct_json *j, bool v);
void ct_json_null(struct ct_json *j);
void ct_json_double(struct ct_json *j, double v);
/* raw hex string of bytes, e.g. "0a1b" */
void ct_json_hex(struct ct_json *j, const void *p, size_t n);
/* convenience: key + value */
static inline __attribute__((always_inline)) void ct_json_kstr(struct ct_json *j, const char *k, const char *v)
{
	ct_json_key(j, k);
	ct_json_str(j, v);
}
static inline __attribute__((always_inline)) void ct_json_kstr_plain(struct ct_json *j, const char *k, const char *v)
{
	ct_json_key(j, k);
	ct_json_str_plain(j, v);
}
static inline __attribute__((always_inline)) void ct_json_kint(struct ct_json *j, const char *k, int64_t v)
{
	ct_json_key(j, k);
	ct_json_int(j, v);
}
static inline __attribute__((always_inline)) void ct_json_kuint(struct ct_json *j, const char *k, uint64_t v)
{
	ct_json_key(j, k);
	ct_json_uint(j, v);
}
static inline __attribute__((always_inline)) void ct_json_kbool(struct ct_json *j, const char *k, bool v)
{
	ct_json_key(j, k);
	ct_json_bool(j, v);
}
/* newline at the end of the document (and flush) */
void ct_json_end(struct ct_json *j);
/* write the buffered output to f */
void ct_json_flush(struct ct_json *j);
/* bytes / printf text written as they are (no separator, no escaping) */
void ct_json_raw(struct ct_json *j, const char *s, size_t n);
void ct_json_rawf(struct ct_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* a number written without a separator: with ct_json_key(), a value */
void ct_json_value_raw(struct ct_json *j, const char *text);
void ct_json_value_rawn(struct ct_json *j, const char *text, size_t n);

/*
 * Direct writes.  A writer that lays out a whole object itself (an event of
 * show --json or of the Chrome export: forty keys, a million times) takes a
 * pointer to the end of the output, makes room once for a run of pieces
 * whose size it knows a bound for, and stores them one after the other:
 * no separator state, no room check per piece.  The pieces are compact
 * JSON, whatever j->pretty says.
 *
 *	o = ct_json_at(j);                  (after ct_json_value_begin, or
 *	o = ct_jw_need(j, o, 256);           inside an object it began)
 *	o = CT_JW_LIT(o, "\"seq\":");
 *	o = ct_jw_u64(o, seq);
 *	o = ct_jw_str(j, o, s, n);          (makes its own room)
 *	ct_json_done(j, o);
 */
/* the separator (or key) state before a value written directly */
void ct_json_value_begin(struct ct_json *j);
static inline char *ct_json_at(struct ct_json *j)
{
	return j->buf + j->len;
}
/* o, or the start of the emptied buffer: room for n <= CT_JSON_FLUSH_AT bytes at it */
static inline __attribute__((always_inline)) char *ct_jw_need(struct ct_json *j, char *o, size_t n)
{
	if ((size_t)(o - j->buf) + n > CT_JSON_FLUSH_AT) {
		j->len = (size_t)(o - j->buf);
		ct_json_flush(j);
		o = j->buf;
	}
	return o;
}
/* the output ends at o: the value just written is an element or a key's value */
static inline void ct_json_done(struct ct_json *j, const char *o)
{
	j->len = (size_t)(o - j->buf);
	j->first[j->depth] = false;
	j->after_key = false;
}
/* a string literal (keys with their quotes, commas, "true"): its length
 * is known at compile time, so the copy is a few moves */
#define CT_JW_LIT(o, lit) ((char *)memcpy((o), (lit), sizeof(lit) - 1) + sizeof(lit) - 1)
/* numbers: at most 21 bytes; "0x..." strings: at most 20 */
char *ct_jw_hexnum(char *o, uint64_t v);
char *ct_jw_u64_long(char *o, uint64_t v);
static inline __attribute__((always_inline)) char *ct_jw_u64(char *o, uint64_t v)
{
	if (v < 10) {
		*o = (char)('0' + v);
		return o + 1;
	}
	return ct_jw_u64_long(o, v);
}
static inline __attribute__((always_inline)) char *ct_jw_i64(char *o, int64_t v)
{
	if (v < 0) {
		*o++ = '-';
		return ct_jw_u64_long(o, (uint64_t)0 - (uint64_t)v);
	}
	return ct_jw_u64(o, (uint64_t)v);
}
static inline __attribute__((always_inline)) char *ct_jw_bool(char *o, bool v)
{
	return v ? CT_JW_LIT(o, "true") : CT_JW_LIT(o, "false");
}
/* a string of n bytes that need no escaping, quoted; room for n + 2 */
static inline __attribute__((always_inline)) char *ct_jw_plain(char *o, const char *s, size_t n)
{
	*o++ = '"';
	ct_json_copy_short(o, s, n);
	o += n;
	*o++ = '"';
	return o;
}
/* the same for a NUL-terminated name, NULL as null: makes its own room */
static inline __attribute__((always_inline)) char *ct_jw_plain_str(struct ct_json *j, char *o, const char *s)
{
	if (!s)
		return CT_JW_LIT(o, "null");
	size_t n = strlen(s);
	o = ct_jw_need(j, o, n + 2);
	return ct_jw_plain(o, s, n);
}
/* ,"key":"value" (key a literal with its quotes) for a name that needs no
 * escaping, NULL: null; and for a NUL-terminated string escaped, with room
 * made for the key first */
#define CT_JW_KPLAIN(j, o, key, v) ct_jw_plain_str((j), CT_JW_LIT((o), "," key ":"), (v))
#define CT_JW_KSTR(j, o, key, s) \
	ct_jw_str((j), CT_JW_LIT(ct_jw_need((j), (o), 64), "," key ":"), (s), strlen(s))
/* s's n bytes escaped, without quotes (ct_jw_str: with them); they make
 * their own room, and leave none behind: ask for the next run's */
char *ct_jw_esc(struct ct_json *j, const char *o, const char *s, size_t n);
char *ct_jw_str(struct ct_json *j, char *o, const char *s, size_t n);
/* the same for the NUL-terminated string in a buffer of cap bytes (a
 * char array: CT_JW_ESC_ARR): its end is found as it is escaped, no
 * strlen first (whole vectors are read inside the buffer, also past the
 * NUL) */
char *ct_jw_escz(struct ct_json *j, char *o, const char *s, size_t cap);
char *ct_jw_strz(struct ct_json *j, char *o, const char *s, size_t cap);
#define CT_JW_ARRAY_SIZE(a)                                                                  \
	(sizeof (a) + 0 * sizeof(struct {                                                  \
		 _Static_assert(!__builtin_types_compatible_p(__typeof__(a), __typeof__(&(a)[0])), \
				"CT_JW_*_ARR takes a char array, not a pointer");                 \
		 int x;                                                                      \
	 }))
#define CT_JW_ESC_ARR(j, o, a) ct_jw_escz((j), (o), (a), CT_JW_ARRAY_SIZE(a))
#define CT_JW_STR_ARR(j, o, a) ct_jw_strz((j), (o), (a), CT_JW_ARRAY_SIZE(a))
/* raw bytes as a hex string ("0a1b") */
char *ct_jw_hex(struct ct_json *j, const char *o, const void *p, size_t n);

#endif
