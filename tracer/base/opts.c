/* A command's options from its one table (opts.h). */
#include "opts.h"
#include "tracer.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define MAX_OPTS 48

static struct option longopts[MAX_OPTS + 1];
static char shortopts[MAX_OPTS * 2 + 4];

static const struct ct_opt *row_of(const struct ct_cmd_spec *c, int key)
{
	for (const struct ct_opt *o = c->opts; o->name; o++)
		if (o->key == key)
			return o;
	return NULL;
}

void ct_opts_begin(const struct ct_cmd_spec *c)
{
	size_t n = 0, s = 0;

	/* '+': options end at the first operand; ':': a missing value is ':' */
	if (c->in_order)
		shortopts[s++] = '+';
	shortopts[s++] = ':';
	for (const struct ct_opt *o = c->opts; o->name && n < MAX_OPTS; o++, n++) {
		longopts[n] = (struct option){ o->name,
					       o->arg == CT_ARG_NONE    ? no_argument
					       : o->arg == CT_ARG_COLOR ? optional_argument
									: required_argument,
					       NULL, o->key };
		if (o->key > 0 && o->key < 0x80) {
			shortopts[s++] = (char)o->key;
			if (o->arg != CT_ARG_NONE)
				shortopts[s++] = ':';
		}
	}
	longopts[n] = (struct option){ 0 };
	shortopts[s] = 0;
	optind = 0; /* glibc: start afresh */
	opterr = 0; /* the errors are ours: one line each */
}

const char *ct_size_why(int sc)
{
	static char why[80];

	if (sc == -3)
		snprintf(why, sizeof why, "is more than %lluM, the largest trace file",
			 (unsigned long long)(CT_SIZE_MAX >> 20));
	else
		snprintf(why, sizeof why, "is not a size of at least %lluK (e.g. 16M)",
			 (unsigned long long)(CT_SIZE_MIN >> 10));
	return why;
}

int ct_opts_error(const struct ct_cmd_spec *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ct_err("%s: %s (try 'cutrace %s --help')", c->cmd, msg, c->cmd);
	return CT_EXIT_USAGE;
}

/* the option as typed, without its "=VALUE" */
static const char *as_typed(const char *a, char *buf, size_t len)
{
	size_t n = strcspn(a, "=");
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), a);
	return buf;
}

/* "--n": the long names it is a prefix of, when more than one ("--nvml,
 * --no-time" into buf) */
static bool ambiguous(const struct ct_cmd_spec *c, const char *typed, char *buf, size_t len)
{
	size_t n = strlen(typed) - 2, used = 0;
	int hits = 0;

	buf[0] = 0;
	if (strncmp(typed, "--", 2) || !n)
		return false;
	for (const struct ct_opt *o = c->opts; o->name; o++) {
		if (strncmp(o->name, typed + 2, n))
			continue;
		hits++;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s--%s", hits > 1 ? ", " : "",
						 o->name);
	}
	return hits > 1;
}

static bool color_word(const char *v, enum ct_color_mode *m)
{
	if (!strcmp(v, "always"))
		*m = CT_COLOR_ALWAYS;
	else if (!strcmp(v, "never"))
		*m = CT_COLOR_NEVER;
	else if (!strcmp(v, "auto"))
		*m = CT_COLOR_AUTO;
	else
		return false;
	return true;
}

int ct_opts_next(const struct ct_cmd_spec *c, int argc, char **argv, int *next, struct ct_optval *v)
{
	char typed[64], list[256];

	for (;;) {
		int k = getopt_long(argc, argv, shortopts, longopts, NULL);
		const struct ct_opt *o;
		/* what was typed: the argument getopt just read */
		const char *a = optind >= 2 && optind - 1 < argc ? argv[optind - 1] : "";

		*next = optind;
		if (k == -1)
			return -1;
		if (k == '?') {
			if (optopt && !strncmp(a, "--", 2) && (o = row_of(c, optopt)))
				return ct_opts_error(c, "--%s takes no value, not '%s'", o->name,
						     strchr(a, '=') ? strchr(a, '=') + 1 : a),
				       -2;
			if (optopt > 0 && optopt < 0x80)
				return ct_opts_error(c, "unknown option '-%c'", optopt), -2;
			as_typed(a, typed, sizeof typed);
			if (ambiguous(c, typed, list, sizeof list))
				return ct_opts_error(c, "'%s' is ambiguous: %s", typed, list), -2;
			return ct_opts_error(c, "unknown option '%s'", typed), -2;
		}
		if (k == ':') {
			o = row_of(c, optopt);
			if (optopt < 0x80 && a[0] == '-' && a[1] == optopt)
				return ct_opts_error(c, "-%c needs a value", optopt), -2;
			return ct_opts_error(c, "--%s needs a value", o ? o->name : "?"), -2;
		}
		o = row_of(c, k);
		if (!o) /* cannot happen: getopt returns what the table holds */
			return ct_opts_error(c, "unknown option '%s'", a), -2;
		memset(v, 0, sizeof *v);
		v->s = optarg;
		switch (o->arg) {
		case CT_ARG_NONE: return k;
		case CT_ARG_STRING:
			if (!*optarg) { /* "--inject needs a rule, not ''" */
				char what[32];
				size_t i = 0;
				for (const char *m = o->meta ? o->meta : "value"; *m && i + 1 < sizeof what;
				     m++)
					what[i++] = (char)(*m >= 'A' && *m <= 'Z' ? *m + 32 : *m);
				what[i] = 0;
				return ct_opts_error(c, "--%s needs a %s, not ''", o->name, what), -2;
			}
			return k;
		case CT_ARG_SIZE: {
			int sc = ct_size_check(optarg, &v->n);
			if (sc < 0)
				return ct_opts_error(c, "--%s '%s' %s", o->name, optarg, ct_size_why(sc)), -2;
			return k;
		}
		case CT_ARG_DURATION:
			if (ct_parse_duration(optarg, &v->n) < 0)
				return ct_opts_error(
					       c,
					       "--%s '%s' is not a duration such as 20s, 500ms or 2m (0: none)",
					       o->name, optarg),
				       -2;
			return k;
		case CT_ARG_COLOR: {
			/* --color alone is always (as ls and grep), --color=WHEN, and
			 * --color WHEN when the next word is one */
			enum ct_color_mode m = CT_COLOR_ALWAYS;
			if (optarg && !color_word(optarg, &m))
				return ct_opts_error(c, "--%s takes auto, always or never, not '%s'", o->name,
						     optarg),
				       -2;
			if (!optarg && optind < argc && color_word(argv[optind], &m))
				optind++;
			ct_color_set_mode(m);
			continue;
		}
		}
		return k;
	}
}

int ct_opts_stable(const struct ct_cmd_spec *c, bool no_time, bool keep_pids)
{
	if (keep_pids && !no_time)
		return ct_opts_error(c, "--pids keeps the real pids under --no-time: use it with --no-time"),
		       -1;
	ct_stable_set(no_time, keep_pids);
	return 0;
}

void ct_opts_resume(int at)
{
	optind = at;
}

/* "  -o, --output DIR", "  --size SIZE", "  --color[=WHEN]" */
static int left_column(const struct ct_opt *o, char *buf, size_t len)
{
	int n;

	if (o->key > 0 && o->key < 0x80)
		n = snprintf(buf, len, "  -%c, --%s", o->key, o->name);
	else
		n = snprintf(buf, len, "  --%s", o->name);
	if (o->arg == CT_ARG_COLOR)
		n += snprintf(buf + n, len - (size_t)n, "[=%s]", o->meta ? o->meta : "WHEN");
	else if (o->arg != CT_ARG_NONE)
		n += snprintf(buf + n, len - (size_t)n, " %s", o->meta ? o->meta : "VALUE");
	return n;
}

/* the help column, and the width the help text is wrapped to */
#define HELP_COL   23
#define HELP_WIDTH 79

void ct_opts_help(const struct ct_cmd_spec *c, FILE *f)
{
	char left[96];

	fputs(c->usage, f);
	fputs("\noptions:\n", f);
	for (const struct ct_opt *o = c->opts; o->name; o++) {
		int n = left_column(o, left, sizeof left);
		const char *h = o->help;
		if (n + 1 > HELP_COL)
			fprintf(f, "%s\n%*s", left, HELP_COL, "");
		else
			fprintf(f, "%-*s", HELP_COL, left);
		/* the text, wrapped at spaces; '\n' breaks the line too */
		while (*h) {
			size_t room = HELP_WIDTH - HELP_COL, l = strcspn(h, "\n");
			if (l > room) {
				l = room;
				while (l > 0 && h[l] != ' ')
					l--;
				if (!l)
					l = strcspn(h, " \n");
			}
			fprintf(f, "%.*s\n", (int)l, h);
			h += l;
			if (*h == ' ' || *h == '\n')
				h++;
			if (*h)
				fprintf(f, "%*s", HELP_COL, "");
		}
	}
	if (c->after)
		fprintf(f, "\n%s", c->after);
}
