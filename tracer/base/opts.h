/*
 * The options of a command: one table per command (tracer/cmd/cmd_*.c),
 * from which getopt_long's table and the command's --help are both made,
 * so that what --help lists is what is accepted.  Sizes and durations are
 * read with the parsers of common/parse.c, the ones the shim uses, and
 * --color is read here once for every command.  A usage error is one line,
 * "cutrace: CMD: ... (try 'cutrace CMD --help')", and exit status 2.
 */
#ifndef CT_OPTS_H
#define CT_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* what an option takes */
enum ct_opt_arg {
	CT_ARG_NONE,     /* a flag */
	CT_ARG_STRING,   /* a value: --name=V, --name V, -xV, -x V */
	CT_ARG_SIZE,     /* a trace file size (common/parse.c: ct_size_check) */
	CT_ARG_DURATION, /* a duration (common/parse.c: ct_parse_duration) */
	CT_ARG_COLOR,    /* --color[=WHEN], --color WHEN: handled here */
};

/* keys above any short option letter */
enum {
	CT_OPT_HELP = 'h',
	CT_OPT_COLOR = 0x100,
	CT_OPT_FIRST_LONG = 0x110, /* a command's own long-only options count from here */
};

struct ct_opt {
	const char *name; /* the long name, without "--" */
	int key;          /* a short option letter, or a key >= CT_OPT_FIRST_LONG */
	enum ct_opt_arg arg;
	const char *meta; /* the value's name in --help: "DIR", "SIZE" */
	const char *help; /* what it does, one line (--help wraps it; '\n' breaks it) */
};

/* the rows every command has */
#define CT_OPT_ROW_HELP                                                                                      \
	{                                                                                                    \
		"help", CT_OPT_HELP, CT_ARG_NONE, NULL, "this help"                                          \
	}
#define CT_OPT_ROW_COLOR                                                                                     \
	{                                                                                                    \
		"color", CT_OPT_COLOR, CT_ARG_COLOR, "WHEN",                                                 \
			"colour: always (--color alone), never, or auto (the default: on a terminal, "       \
			"unless NO_COLOR is set or TERM is dumb)"                                            \
	}

struct ct_cmd_spec {
	const char *cmd;           /* "show" */
	const char *usage;         /* --help before the option list: "usage: cutrace show ..." */
	const struct ct_opt *opts; /* ends with a row whose name is NULL */
	const char *after;         /* --help after the option list, or NULL */
	bool in_order;             /* options end at the first operand (run's -- CMD) */
};

/* a value: as given, and read as a size (bytes) or a duration (ns) */
struct ct_optval {
	const char *s;
	uint64_t n;
};

/* Start reading argv (argv[0] is the command's name). */
void ct_opts_begin(const struct ct_cmd_spec *c);
/*
 * The next option: its key with *v, CT_OPT_HELP for -h/--help, -1 at the
 * end of the options (*next: the index of the first operand), or -2 after
 * a usage error was said.  --color is applied here and not returned.  A
 * command whose spec has in_order may take the operand at *next and call
 * ct_opts_resume(*next + 1): options may follow it.
 */
int ct_opts_next(const struct ct_cmd_spec *c, int argc, char **argv, int *next, struct ct_optval *v);
/* after an operand at argv[at-1]: read options again from argv[at] */
void ct_opts_resume(int at);
/* what is wrong with a size that ct_size_check (common/parse.c) answered
 * sc < 0 for: "is more than 1024M, the largest trace file", ... */
const char *ct_size_why(int sc);
/* --no-time and --pids (ct_stable_set); --pids without --no-time would
 * change nothing: refused with one line, -1 */
int ct_opts_stable(const struct ct_cmd_spec *c, bool no_time, bool keep_pids);
/* --help, made from the table */
void ct_opts_help(const struct ct_cmd_spec *c, FILE *f);
/* one line "cutrace: CMD: MESSAGE (try 'cutrace CMD --help')"; returns CT_EXIT_USAGE */
int ct_opts_error(const struct ct_cmd_spec *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
