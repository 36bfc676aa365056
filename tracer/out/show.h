/*
 * `cutrace show` output formats.  Every format is an ops struct driven by
 * one iterator in show.c (open each trace, stream its events, describe
 * each one once), in the manner of uftrace's dump ops.  A new exporter
 * defines one `const struct ct_show_ops` and is listed in the formats[]
 * table of show.c.
 */
#ifndef CT_SHOW_H
#define CT_SHOW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "describe.h"
#include "diag.h"
#include "trace.h"

struct ct_show_ctx {
	FILE *out;
	bool no_time;            /* --no-time: no timestamps and no durations */
	const char *out_path;    /* -o FILE, or NULL for stdout */
	void *priv;              /* the format's own state */
	/* the process being shown */
	struct ct_trace *trace;
	uint64_t t0_ns;          /* monotonic time of the first event (text offsets) */
	bool have_t0;
	/* the verdict of the process being shown (valid in process_end) */
	const struct ct_verdict *verdict;
	/* all verdicts so far (for a job summary); n_verdicts entries */
	struct ct_verdict *verdicts;
	int n_verdicts, cap_verdicts;
	int n_unreadable;
	bool multi;              /* more than one trace file is shown */
	bool no_verdict;         /* the caller prints the verdict (probe) */
	bool expand;             /* --expand: no folding of look-up runs */
};

/* what the iterator knows about one event beyond the event itself */
struct ct_show_event {
	const struct ct_event *ev;
	const struct ct_desc *d;
	unsigned depth;          /* calls of the same thread this one is nested in */
};

struct ct_show_ops {
	const char *name;
	bool wants_args;         /* events need ct_desc's key/value args (JSON, Chrome) */
	/* every hook may be NULL; a non-zero return stops the output (exit 2) */
	int (*begin)(struct ct_show_ctx *c);
	int (*process_begin)(struct ct_show_ctx *c, struct ct_trace *t);
	int (*event)(struct ct_show_ctx *c, const struct ct_show_event *e);
	int (*process_end)(struct ct_show_ctx *c, struct ct_trace *t, const struct ct_trace_stats *st);
	/* a file that could not be read (it was already reported on stderr) */
	void (*bad_file)(struct ct_show_ctx *c, const char *path, const char *why);
	int (*end)(struct ct_show_ctx *c);
};

extern const struct ct_show_ops ct_show_text_ops;
extern const struct ct_show_ops ct_show_json_ops;
extern const struct ct_show_ops ct_show_chrome_ops;
extern const struct ct_show_ops ct_show_prom_ops;

struct ct_show_summary {
	int files;               /* trace files named or found */
	int readable;            /* files opened and streamed */
	int bad;                 /* files skipped as unreadable or malformed */
	int processes_failed;    /* processes whose CUDA start-up failed (diagnosis) */
};

/*
 * The exit code of `cutrace show`: 2 when nothing was readable, 1 when a
 * process's CUDA start-up failed, else 0.
 */
int ct_show_exit_code(const struct ct_show_summary *s);

/* what to show, and how */
struct ct_show_opts {
	const struct ct_show_ops *ops;   /* ct_show_format(...) */
	bool no_time;                    /* --no-time */
	const char *out_path;            /* -o FILE, NULL: standard output */
	bool summary_only;               /* --summary: only the job summary (text) */
	bool no_verdict;                 /* leave the verdict out (probe prints it) */
	bool all;                        /* --all: text shows every process of a job, not one per group */
	bool expand;                     /* --expand: every look-up line, no "x 380" folds */
	uint32_t only;                   /* --only: 1 << CT_SHOW_ONLY_* of the events shown, 0 all */
};
/* --only's classes of calls */
enum {
	CT_SHOW_ONLY_DL,
	CT_SHOW_ONLY_CUDA,
	CT_SHOW_ONLY_CUDART,
	CT_SHOW_ONLY_NVML,
	CT_SHOW_ONLY_OPEN,
	CT_SHOW_ONLY_IOCTL,
	CT_SHOW_ONLY_CLOSE
};
/* "dl,cuda,ioctl" -> a mask; -1 with the bad word in bad */
int ct_show_parse_only(const char *list, uint32_t *mask, char *bad, size_t badlen);
/* the format called name ("text", "json", "chrome", "prometheus"), NULL when there is none */
const struct ct_show_ops *ct_show_format(const char *name);
/* show every trace of the files and directories in args (directories
 * searched recursively; with more than one trace, the text output starts
 * with the job summary); returns the exit code, as ct_show_exit_code */
int ct_show_run(const struct ct_show_opts *o, char **args, int nargs);

#endif
