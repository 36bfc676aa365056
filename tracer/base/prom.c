/*
 * Prometheus text exposition format (prom.h).  Escaping as the format
 * says: in HELP, backslash and newline; in label values, backslash, double
 * quote and newline.
 */
#include "prom.h"

#include <math.h>
#include <stdarg.h>

static void put_escaped(FILE *f, const char *s, int quote)
{
	for (; s && *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (quote && *s == '"')
			fputs("\\\"", f);
		else
			fputc(*s, f);
	}
}

void ct_prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s ", name);
	put_escaped(f, help, 0);
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

void ct_prom_sample(FILE *f, const char *name, double value, ...)
{
	va_list ap;
	const char *k;
	int n = 0;

	fputs(name, f);
	va_start(ap, value);
	while ((k = va_arg(ap, const char *)) != NULL) {
		const char *v = va_arg(ap, const char *);
		fprintf(f, "%s%s=\"", n++ ? "," : "{", k);
		put_escaped(f, v, 1);
		fputc('"', f);
	}
	va_end(ap);
	if (n)
		fputc('}', f);
	if (isnan(value))
		fputs(" NaN\n", f);
	else if (value == floor(value) && fabs(value) < 1e15)
		fprintf(f, " %.0f\n", value);
	else
		fprintf(f, " %.9g\n", value);
}
