/* ct_snprintf: snprintf's output, cheaper (fmt.c). */
#ifndef CT_FMT_H
#define CT_FMT_H

#include <stdarg.h>
#include <stddef.h>

int ct_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int ct_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

#endif
