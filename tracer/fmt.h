/* ct_snprintf: snprintf's output, cheaper (fmt.c). */
#ifndef CT_FMT_H
#define CT_FMT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

int ct_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int ct_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* The decimal (hex, lower case) digits of v written backwards so that they
 * end just before `end`; returns where they start.  The buffer needs room
 * for 20 (16) of them.  The output paths' number writers. */
static inline char *ct_udec_rev(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
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

#endif
