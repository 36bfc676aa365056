/*
 * cutrace show FILE|DIR...: decode trace files.
 *
 * One iterator (show_file) opens each trace, streams its events in enter
 * order, describes each event once and works out how deep it is nested in
 * other calls of its thread; the output format is an ops struct (show.h):
 * text (show_text.c), JSON (show_json.c), Chrome trace (later).
 */
#include "show.h"
#include "tracer.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cutrace show [OPTIONS] FILE|DIR...\n"
		"\n"
		"Decode cutrace trace files: one block per process, then its calls in order.\n"
		"A DIR means every *.cutrace file in it and in its subdirectories (one per\n"
		"host of a job on a shared filesystem, say), sorted by path.  With more than\n"
		"one trace, the text output starts with a summary of the whole job: how many\n"
		"processes were healthy, and the failed ones grouped by verdict with their\n"
		"hosts, ranks and pids.\n"
		"\n"
		"options:\n"
		"  --format=text|json|chrome  output format (default text)\n"
		"  --json                     the same as --format=json\n"
		"  -o, --output=FILE          write to FILE instead of standard output\n"
		"  --no-time                  leave out timestamps and durations (stable output)\n"
		"  --raw                      JSON: include the recorded parameter blocks as hex\n"
		"  --color=auto|always|never  colour the text output (auto: on a terminal, unless NO_COLOR)\n"
		"  -h, --help                 this help\n"
		"\n"
		"text timeline: one line per call,\n"
		"  +TIME ms [TID] call(arguments) = result  details  <duration>  MARKS\n"
		"TIME counts from the process's first event; [TID] is shown for threads other\n"
		"than the main one; calls made inside another call of the same thread (the\n"
		"ioctls of cuInit) are indented.  MARKS: FAILED (the call failed: errno,\n"
		"CUresult, NV status, NULL handle), NEVER RETURNED (no exit record: the call\n"
		"hung or the process died in it), [injected: ...] (a cutrace rule produced\n"
		"the result).  Lines starting with ** are notes from the shim.\n"
		"\n"
		"exit status: 0 every process shown initialized CUDA (or did not fail), 1 some\n"
		"process failed (its verdict says why), 2 bad usage or no readable trace.\n");
}

/* ---- the shared iterator ----------------------------------------------------- */

#define CT_NEST_TIDS 64   /* threads whose open calls are tracked */
#define CT_NEST_MAX  16   /* open calls tracked per thread */

struct nest {
	uint32_t tid;
	unsigned n;
	uint64_t end[CT_NEST_MAX];  /* end time of each open call, UINT64_MAX: never returned */
	uint64_t used;
	bool live;
};

struct iter {
	struct ct_show_ctx *c;
	const struct ct_show_ops *ops;
	struct ct_desc d;
	struct ct_diag *diag;
	struct ct_verdict verdict;
	struct nest nest[CT_NEST_TIDS];
	struct nest *last;        /* the thread of the previous event */
	uint64_t clock;
	int rc;
};

static struct nest *nest_of(struct iter *it, uint32_t tid)
{
	struct nest *victim = &it->nest[0];

	/* runs of events of one thread are the common case */
	if (it->last && it->last->live && it->last->tid == tid)
		return it->last;
	/* threads take the free entries in order, and an entry never becomes
	 * free again: the first free one ends the search */
	for (unsigned i = 0; i < CT_NEST_TIDS; i++) {
		struct nest *n = &it->nest[i];
		if (!n->live) {
			victim = n;
			break;
		}
		if (n->tid == tid)
			return it->last = n;
		if (n->used < victim->used)
			victim = n;
	}
	/* bounded: the least recently seen thread forgets its open calls */
	memset(victim, 0, sizeof *victim);
	victim->live = true;
	victim->tid = tid;
	return it->last = victim;
}

/*
 * Depth of ev among the calls of its thread: calls that started before it and
 * had not returned when it started.  Events arrive in enter order, and within
 * a thread that is time order, so a stack of end times is enough.
 */
static unsigned nest_depth(struct iter *it, const struct ct_event *ev)
{
	struct nest *n = nest_of(it, ev->tid);
	unsigned depth;

	n->used = ++it->clock;
	while (n->n && n->end[n->n - 1] <= ev->t_ns)
		n->n--;
	depth = n->n;
	if (ev->type != CT_REC_NOTE && ev->has_enter && n->n < CT_NEST_MAX)
		n->end[n->n++] = ev->has_exit ? ev->t_ns + ev->dur_ns : UINT64_MAX;
	return depth;
}

static int on_event(const struct ct_event *ev, void *user)
{
	struct iter *it = user;
	struct ct_show_event se;

	if (!it->c->have_t0) {
		it->c->t0_ns = ev->t_ns;
		it->c->have_t0 = true;
	}
	ct_describe_ex(it->c->trace, ev, &it->d, it->ops->wants_args ? CT_DESC_ARGS : 0);
	ct_diag_event(it->diag, ev, &it->d);
	se.ev = ev;
	se.d = &it->d;
	se.depth = nest_depth(it, ev);
	if (it->ops->event && (it->rc = it->ops->event(it->c, &se)) != 0)
		return it->rc;
	return 0;
}

/* Show one file.  Returns 0 shown, 1 unreadable (reported), -1 output failed. */
static int show_file(struct iter *it, const char *path, bool in_dir)
{
	struct ct_show_ctx *c = it->c;
	struct ct_trace *t;
	char err[512];
	int r;

	if (ct_trace_open(path, &t, err, sizeof err) < 0) {
		if (in_dir)
			ct_warn("%s: %s (skipped)", path, err);
		else
			ct_err("%s: %s", path, err);
		if (it->ops->bad_file)
			it->ops->bad_file(c, path, err);
		return 1;
	}
	memset(it->nest, 0, sizeof it->nest);
	it->last = NULL;
	c->trace = t;
	c->have_t0 = false;
	c->t0_ns = 0;
	it->rc = 0;
	ct_diag_begin(it->diag, t);
	c->verdict = NULL;
	r = it->ops->process_begin ? it->ops->process_begin(c, t) : 0;
	if (!r) {
		ct_trace_events(t, on_event, it);
		r = it->rc;
	}
	ct_diag_end(it->diag, ct_trace_stats(t), &it->verdict);
	c->verdict = &it->verdict;
	if (c->n_verdicts == c->cap_verdicts) {
		int ncap = c->cap_verdicts ? c->cap_verdicts * 2 : 16;
		struct ct_verdict *nv = realloc(c->verdicts, (size_t)ncap * sizeof *nv);
		if (nv) {
			c->verdicts = nv;
			c->cap_verdicts = ncap;
		}
	}
	if (c->n_verdicts < c->cap_verdicts)
		c->verdicts[c->n_verdicts++] = it->verdict;
	if (!r && it->ops->process_end)
		r = it->ops->process_end(c, t, ct_trace_stats(t));
	c->trace = NULL;
	ct_trace_close(t);
	return r ? -1 : 0;
}

/* ---- the trace files of all arguments --------------------------------------------- */

struct path_list {
	char **path;
	bool *in_dir;            /* found in a directory (a bad one is skipped with a warning) */
	int n, cap;
};

static int list_add(struct path_list *l, const char *path, bool in_dir)
{
	if (l->n == l->cap) {
		int ncap = l->cap ? l->cap * 2 : 32;
		char **np = realloc(l->path, (size_t)ncap * sizeof *np);
		if (!np)
			return -1;
		l->path = np;
		bool *nd = realloc(l->in_dir, (size_t)ncap * sizeof *nd);
		if (!nd)
			return -1;
		l->in_dir = nd;
		l->cap = ncap;
	}
	if (!(l->path[l->n] = strdup(path)))
		return -1;
	l->in_dir[l->n++] = in_dir;
	return 0;
}

static void list_free(struct path_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->path[i]);
	free(l->path);
	free(l->in_dir);
}

/* the trace files an argument names (directories searched recursively);
 * -1 with err when it names none */
static int gather(const char *arg, struct path_list *l, char *err, size_t errlen)
{
	struct stat st;
	char **paths;
	bool dir = stat(arg, &st) == 0 && S_ISDIR(st.st_mode);
	int n = ct_list_traces_ex(arg, true, &paths, err, errlen), rc = 0;

	for (int i = 0; i < n && rc == 0; i++)
		rc = list_add(l, paths[i], dir);
	ct_free_paths(paths, n);
	if (rc < 0)
		snprintf(err, errlen, "out of memory");
	return n < 0 || rc < 0 ? -1 : 0;
}

int ct_show_exit_code(const struct ct_show_summary *s)
{
	if (s->readable == 0)
		return CT_EXIT_USAGE;
	if (s->processes_failed)
		return CT_EXIT_PROBLEM;
	return CT_EXIT_OK;
}

/* ---- options ------------------------------------------------------------------ */

struct format {
	const char *name;
	const struct ct_show_ops *ops;  /* NULL: not built yet */
};

static const struct format formats[] = {
	{ "text", &ct_show_text_ops },
	{ "json", &ct_show_json_ops },
	{ "chrome", &ct_show_chrome_ops },
};

static const struct format *find_format(const char *name)
{
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

/* "--opt=VALUE" or "--opt VALUE": the value, advancing *i for the second form */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n))
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n])
		return NULL;
	if (*i + 1 >= argc) {
		ct_err("show: %s needs a value", name);
		return "";
	}
	return argv[++*i];
}

int cmd_show(int argc, char **argv)
{
	const struct format *fmt = find_format("text");
	struct ct_show_ctx ctx = { 0 };
	struct ct_show_summary sum = { 0 };
	struct iter *it;
	const char *out_path = NULL, *v;
	char **args = calloc((size_t)argc + 1, sizeof *args);
	int nargs = 0, rc = CT_EXIT_OK;
	bool opts_done = false, out_failed = false;

	if (!args)
		ct_die(CT_EXIT_USAGE, "out of memory");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opts_done || a[0] != '-' || !a[1]) {
			args[nargs++] = argv[i];
		} else if (!strcmp(a, "--")) {
			opts_done = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			free(args);
			return CT_EXIT_OK;
		} else if (!strcmp(a, "--json")) {
			fmt = find_format("json");
		} else if (!strcmp(a, "--no-time")) {
			ctx.no_time = true;
		} else if (!strcmp(a, "--raw")) {
			ct_desc_json_raw = true;
		} else if ((v = opt_value(argc, argv, &i, "--format"))) {
			if (!*v)
				goto bad_usage;
			if (!(fmt = find_format(v))) {
				ct_err("show: unknown format '%s' (text, json or chrome)", v);
				free(args);
				return CT_EXIT_USAGE;
			}
		} else if ((v = opt_value(argc, argv, &i, "--color")) ||
			   (v = opt_value(argc, argv, &i, "--colour"))) {
			if (!*v)
				goto bad_usage;
			if (!strcmp(v, "auto"))
				ct_color_set_mode(CT_COLOR_AUTO);
			else if (!strcmp(v, "always"))
				ct_color_set_mode(CT_COLOR_ALWAYS);
			else if (!strcmp(v, "never"))
				ct_color_set_mode(CT_COLOR_NEVER);
			else {
				ct_err("show: --color takes auto, always or never, not '%s'", v);
				free(args);
				return CT_EXIT_USAGE;
			}
		} else if ((v = opt_value(argc, argv, &i, "--output")) ||
			   (v = opt_value(argc, argv, &i, "-o"))) {
			if (!*v)
				goto bad_usage;
			out_path = v;
		} else if (!strncmp(a, "-o", 2) && a[2] != '-') {
			out_path = a + 2;
		} else {
			ct_err("show: unknown option '%s' (try 'cutrace show --help')", a);
			free(args);
			return CT_EXIT_USAGE;
		}
	}
	if (nargs == 0) {
		ct_err("show: no trace file or directory given (try 'cutrace show --help')");
		free(args);
		return CT_EXIT_USAGE;
	}
	if (!fmt->ops) {
		ct_err("show: %s export not built yet", fmt->name);
		free(args);
		return CT_EXIT_USAGE;
	}

	ctx.out_path = out_path;
	ctx.out = out_path ? fopen(out_path, "w") : stdout;
	if (!ctx.out) {
		ct_err("%s: %s", out_path, strerror(errno));
		free(args);
		return CT_EXIT_USAGE;
	}
	it = calloc(1, sizeof *it);
	if (!it || !(it->diag = ct_diag_new()))
		ct_die(CT_EXIT_USAGE, "out of memory");
	it->c = &ctx;
	it->ops = fmt->ops;

	/* every trace of every argument, directories searched recursively */
	struct path_list list = { 0 };
	char **arg_err = calloc((size_t)nargs + 1, sizeof *arg_err);
	for (int a = 0; arg_err && a < nargs; a++) {
		char err[PATH_MAX + 128];
		if (gather(args[a], &list, err, sizeof err) < 0) {
			ct_err("%s", err);
			sum.bad++;
			arg_err[a] = strdup(err);
		}
	}
	ctx.multi = list.n > 1;

	/* a job (several traces): the text output starts with the summary, so
	 * diagnose everything once before showing it */
	if (fmt->ops == &ct_show_text_ops && list.n > 1) {
		struct ct_verdict *pre = calloc((size_t)list.n, sizeof *pre);
		int k = 0, bad = 0;
		char err[600];
		for (int i = 0; pre && i < list.n; i++)
			if (ct_diagnose_file(list.path[i], &pre[k], err, sizeof err) == 0)
				k++;
			else
				bad++;
		if (pre) {
			ct_summary_text(ctx.out, pre, k, bad);
			fputc('\n', ctx.out);
		}
		free(pre);
	}

	if (it->ops->begin && it->ops->begin(&ctx))
		out_failed = true;
	for (int a = 0; a < nargs && !out_failed && arg_err; a++)
		if (arg_err[a] && it->ops->bad_file)
			it->ops->bad_file(&ctx, args[a], arg_err[a]);
	for (int i = 0; i < list.n && !out_failed; i++) {
		int r = show_file(it, list.path[i], list.in_dir[i]);
		sum.files++;
		if (r == 0) {
			sum.readable++;
			if (!it->verdict.ok)
				sum.processes_failed++;
		} else if (r > 0) {
			ctx.n_unreadable++;
			sum.bad++;
		}
		if (r < 0)
			out_failed = true;
	}
	for (int a = 0; arg_err && a < nargs; a++)
		free(arg_err[a]);
	free(arg_err);
	list_free(&list);
	if (!out_failed && it->ops->end && it->ops->end(&ctx))
		out_failed = true;

	if (fflush(ctx.out) != 0 || ferror(ctx.out))
		out_failed = true;
	if (out_failed)
		ct_err("%s: write error: %s", out_path ? out_path : "standard output", strerror(errno));
	if (out_path && fclose(ctx.out) != 0 && !out_failed) {
		ct_err("%s: %s", out_path, strerror(errno));
		out_failed = true;
	}
	rc = out_failed ? CT_EXIT_USAGE : ct_show_exit_code(&sum);
	ct_diag_free(it->diag);
	free(ctx.verdicts);
	free(it);
	free(args);
	return rc;

bad_usage: /* opt_value said what was missing */
	free(args);
	return CT_EXIT_USAGE;
}
