#include "json.h"

#include <math.h>

void ct_json_init(struct ct_json *j, FILE *f, bool pretty)
{
	j->f = f;
	j->depth = 0;
	j->pretty = pretty;
	j->first[0] = true;
	j->after_key = false;
}

static void indent(struct ct_json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* separator before a value or a key at the current level */
static void sep(struct ct_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (j->depth > 0)
		indent(j);
}

static void open_(struct ct_json *j, char c)
{
	sep(j);
	fputc(c, j->f);
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
	fputc(c, j->f);
}

void ct_json_obj_begin(struct ct_json *j) { open_(j, '{'); }
void ct_json_obj_end(struct ct_json *j) { close_(j, '}'); }
void ct_json_arr_begin(struct ct_json *j) { open_(j, '['); }
void ct_json_arr_end(struct ct_json *j) { close_(j, ']'); }

static void put_escaped(FILE *f, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20 || c >= 0x7f) {
				/* bytes outside printable ASCII are escaped one by one so
				 * that arbitrary program bytes still give valid JSON */
				fputs("\\u00", f);
				fputc(hex[c >> 4], f);
				fputc(hex[c & 15], f);
			} else {
				fputc(c, f);
			}
		}
	}
	fputc('"', f);
}

void ct_json_key(struct ct_json *j, const char *key)
{
	sep(j);
	put_escaped(j->f, (const unsigned char *)key, __builtin_strlen(key));
	fputc(':', j->f);
	if (j->pretty)
		fputc(' ', j->f);
	j->after_key = true;
}

void ct_json_strn(struct ct_json *j, const char *s, size_t n)
{
	sep(j);
	put_escaped(j->f, (const unsigned char *)s, n);
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
	fprintf(j->f, "%lld", (long long)v);
}

void ct_json_uint(struct ct_json *j, uint64_t v)
{
	sep(j);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void ct_json_bool(struct ct_json *j, bool v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void ct_json_null(struct ct_json *j)
{
	sep(j);
	fputs("null", j->f);
}

void ct_json_double(struct ct_json *j, double v)
{
	sep(j);
	if (isfinite(v))
		fprintf(j->f, "%.17g", v);
	else
		fputs("null", j->f);
}

void ct_json_hex(struct ct_json *j, const void *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *b = p;

	sep(j);
	fputc('"', j->f);
	for (size_t i = 0; i < n; i++) {
		fputc(hex[b[i] >> 4], j->f);
		fputc(hex[b[i] & 15], j->f);
	}
	fputc('"', j->f);
}

void ct_json_kstr(struct ct_json *j, const char *k, const char *v) { ct_json_key(j, k); ct_json_str(j, v); }
void ct_json_kint(struct ct_json *j, const char *k, int64_t v) { ct_json_key(j, k); ct_json_int(j, v); }
void ct_json_kuint(struct ct_json *j, const char *k, uint64_t v) { ct_json_key(j, k); ct_json_uint(j, v); }
void ct_json_kbool(struct ct_json *j, const char *k, bool v) { ct_json_key(j, k); ct_json_bool(j, v); }

void ct_json_end(struct ct_json *j)
{
	fputc('\n', j->f);
}
