/*
 * Showing traces (show.h): one iterator opens each trace, streams its
 * events in enter order, describes each event once and works out how deep
 * it is nested in other calls of its thread; the output format is an ops
 * struct: text (show_text.c), JSON (show_json.c), Chrome trace
 * (show_chrome.c).  `cutrace show` (cmd/cmd_show.c) and `cutrace probe`
 * call ct_show_run.
 */
#include "show.h"
#include "outfile.h"
#include "tracer.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the iterator --------------------------------------------------------- */

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
	uint32_t only; /* --only mask, 0 every event */
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

/* the --only class of a call */
static uint32_t only_class(unsigned call)
{
	switch (ct_call_family(call)) {
	case CT_FAM_LOADER: return 1u << CT_SHOW_ONLY_DL;
	case CT_FAM_DRIVER: return 1u << CT_SHOW_ONLY_CUDA;
	case CT_FAM_RUNTIME: return 1u << CT_SHOW_ONLY_CUDART;
	case CT_FAM_NVML: return 1u << CT_SHOW_ONLY_NVML;
	case CT_FAM_FS: return 1u << CT_SHOW_ONLY_OPEN; /* stat, mknod, ... of NVIDIA paths */
	case CT_FAM_IO:
		return call == CT_CALL_ioctl   ? 1u << CT_SHOW_ONLY_IOCTL
		       : call == CT_CALL_close ? 1u << CT_SHOW_ONLY_CLOSE
					       : 1u << CT_SHOW_ONLY_OPEN;
	default: return ~0u;
	}
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
	if (it->only && ev->type != CT_REC_NOTE && !(it->only & only_class(ev->call)))
		return 0; /* --only: the verdict saw it, the output does not */
	if (it->ops->event && (it->rc = it->ops->event(it->c, &se)) != 0)
		return it->rc;
	return 0;
}

int ct_show_parse_only(const char *list, uint32_t *mask, char *bad, size_t badlen)
{
	static const struct {
		const char *name;
		uint32_t bits;
	} words[] = {
		{ "dl", 1u << CT_SHOW_ONLY_DL },
		{ "loader", 1u << CT_SHOW_ONLY_DL },
		{ "cuda", 1u << CT_SHOW_ONLY_CUDA },
		{ "driver", 1u << CT_SHOW_ONLY_CUDA },
		{ "cudart", 1u << CT_SHOW_ONLY_CUDART },
		{ "runtime", 1u << CT_SHOW_ONLY_CUDART },
		{ "nvml", 1u << CT_SHOW_ONLY_NVML },
		{ "open", 1u << CT_SHOW_ONLY_OPEN },
		{ "ioctl", 1u << CT_SHOW_ONLY_IOCTL },
		{ "close", 1u << CT_SHOW_ONLY_CLOSE },
		{ "io", (1u << CT_SHOW_ONLY_OPEN) | (1u << CT_SHOW_ONLY_IOCTL) | (1u << CT_SHOW_ONLY_CLOSE) },
	};
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t n = strcspn(p, ","), i;
		for (i = 0; i < sizeof words / sizeof words[0]; i++)
			if (strlen(words[i].name) == n && !strncmp(words[i].name, p, n))
				break;
		if (i == sizeof words / sizeof words[0]) {
			snprintf(bad, badlen, "%.*s", (int)n, p);
			return -1;
		}
		*mask |= words[i].bits;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!*mask) {
		snprintf(bad, badlen, "%s", list);
		return -1;
	}
	return 0;
}

/* Show one file.  Returns 0 shown, 1 unreadable (reported), -1 output failed. */
static int show_file(struct iter *it, const char *path, bool in_dir)
{
	struct ct_show_ctx *c = it->c;
	struct ct_trace *t = NULL;
	char err[512];
	int r;

	/* of a job's many files, the written part of each (read, not mapped) */
	r = c->multi ? ct_trace_open_used(path, &t, err, sizeof err)
		     : ct_trace_open(path, &t, err, sizeof err);
	if (r < 0) {
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

/* --no-time: each directory's traces in the order their processes started
 * (read/list.c), their pids numbered #1, #2, ... in that order */
static void stable_order(struct path_list *l)
{
	int *perm = calloc((size_t)l->n + 1, sizeof *perm);
	uint32_t *pid = calloc((size_t)l->n + 1, sizeof *pid);
	bool *in_dir = calloc((size_t)l->n + 1, sizeof *in_dir);

	if (perm && pid && in_dir) {
		ct_list_order_by_start(l->path, l->n, perm, pid);
		for (int i = 0; i < l->n; i++) {
			in_dir[i] = l->in_dir[perm[i]];
			ct_stable_id(pid[i]);
		}
		memcpy(l->in_dir, in_dir, (size_t)l->n * sizeof *in_dir);
	}
	free(perm);
	free(pid);
	free(in_dir);
}

int ct_show_exit_code(const struct ct_show_summary *s)
{
	if (s->readable == 0)
		return CT_EXIT_USAGE;
	if (s->processes_failed)
		return CT_EXIT_PROBLEM;
	/* nothing failed in what could be read, but not everything could */
	if (s->bad)
		return CT_EXIT_USAGE;
	return CT_EXIT_OK;
}

/* ---- formats ---------------------------------------------------------------------- */

static const struct {
	const char *name;
	const struct ct_show_ops *ops;
} formats[] = {
	{ "text", &ct_show_text_ops },
	{ "json", &ct_show_json_ops },
	{ "chrome", &ct_show_chrome_ops },
	{ "prometheus", &ct_show_prom_ops },
};

const struct ct_show_ops *ct_show_format(const char *name)
{
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
		if (!strcmp(formats[i].name, name))
			return formats[i].ops;
	return NULL;
}

/* ---- everything ---------------------------------------------------------------------- */

int ct_show_run(const struct ct_show_opts *o, char **args, int nargs)
{
	struct ct_show_ctx ctx = { 0 };
	struct ct_show_summary sum = { 0 };
	struct ct_outfile of;
	struct iter *it;
	const char *out_path = o->out_path;
	char oerr[PATH_MAX + 256];
	int rc, hidden_failed = 0;
	int *more = NULL; /* per file: -1 not shown (--all shows it), else how many more of its group */
	bool out_failed = false;

	ctx.no_time = o->no_time;
	ctx.out_path = out_path;
	ctx.no_verdict = o->no_verdict;
	ctx.expand = o->expand;
	it = calloc(1, sizeof *it);
	if (!it || !(it->diag = ct_diag_new()))
		ct_die(CT_EXIT_USAGE, "out of memory");
	it->c = &ctx;
	it->ops = o->ops;
	it->only = o->only;

	/* every trace of every argument, directories searched recursively */
	struct path_list list = { 0 };
	char **arg_err = calloc((size_t)nargs + 1, sizeof *arg_err);
	for (int a = 0; arg_err && a < nargs; a++) {
		char err[PATH_MAX + 128];
		if (gather(args[a], &list, err, sizeof err) < 0) {
			ct_err("%s", err);
			sum.bad++;
			ctx.n_unreadable++;
			arg_err[a] = strdup(err);
		}
	}
	ctx.multi = list.n > 1;
	if (o->no_time)
		stable_order(&list);

	/* the output is never one of the inputs, and replaces its file only
	 * when written whole (base/outfile.c) */
	if (out_path && (ct_outfile_check(out_path, args, nargs, oerr, sizeof oerr) < 0 ||
			 ct_outfile_check(out_path, list.path, list.n, oerr, sizeof oerr) < 0 ||
			 ct_outfile_open(&of, out_path, oerr, sizeof oerr) < 0)) {
		ct_err("%s", oerr);
		rc = CT_EXIT_USAGE;
		goto done;
	}
	ctx.out = out_path ? of.f : stdout;

	/* a job (several traces): the text output starts with the summary, so
	 * diagnose everything once before showing it */
	/* and, unless --all, shows one process of each group: the first, with
	 * how many more read the same */
	int nshow = list.n;
	if ((o->ops == &ct_show_text_ops && list.n > 1) || o->summary_only) {
		struct ct_verdict *pre = calloc((size_t)list.n + 1, sizeof *pre);
		int *at = calloc((size_t)list.n + 1, sizeof *at); /* pre index -> list index */
		int k = 0, bad = 0;
		char err[600];
		more = o->all ? NULL : calloc((size_t)list.n + 1, sizeof *more);
		for (int i = 0; pre && at && i < list.n; i++)
			if (ct_diagnose_file(list.path[i], &pre[k], err, sizeof err) == 0)
				at[k++] = i;
			else
				bad++;
		if (pre && at && (k || !o->summary_only)) {
			ct_summary_text(ctx.out, pre, k, bad);
			if (!o->summary_only)
				fputc('\n', ctx.out);
		}
		/* --summary: that is all */
		for (int i = 0; o->summary_only && pre && i < k; i++)
			sum.processes_failed += !pre[i].ok;
		if (o->summary_only) {
			sum.readable = k;
			sum.bad += bad;
			nshow = 0;
		}
		for (int a = 0; more && pre && at && !o->summary_only && a < k; a++) {
			int first = a;
			for (int b = 0; b < a; b++)
				if (more[at[b]] >= 0 && ct_verdict_same_group(&pre[b], &pre[a])) {
					first = b;
					break;
				}
			if (first != a) {
				more[at[a]] = -1;
				more[at[first]]++;
				hidden_failed += !pre[a].ok;
			}
		}
		if (!pre || !at) {
			free(more);
			more = NULL;
		}
		free(pre);
		free(at);
	}

	if (it->ops->begin && it->ops->begin(&ctx))
		out_failed = true;
	for (int a = 0; a < nargs && !out_failed && arg_err; a++)
		if (arg_err[a] && it->ops->bad_file)
			it->ops->bad_file(&ctx, args[a], arg_err[a]);
	sum.processes_failed += hidden_failed;
	for (int i = 0; i < nshow && !out_failed; i++) {
		if (more && more[i] < 0) {
			sum.files++;
			sum.readable++;
			continue;
		}
		int r = show_file(it, list.path[i], list.in_dir[i]);
		if (more && more[i] > 0 && r == 0)
			fprintf(ctx.out,
				"  (%d more process%s of this group not shown: cutrace show --all)\n",
				more[i], more[i] == 1 ? "" : "es");
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
	if (!out_failed && it->ops->end && it->ops->end(&ctx))
		out_failed = true;

	if (!out_path) {
		if (fflush(ctx.out) != 0 || ferror(ctx.out))
			out_failed = true;
		if (out_failed)
			ct_err("standard output: write error: %s", strerror(errno));
		rc = out_failed ? CT_EXIT_USAGE : ct_show_exit_code(&sum);
	} else if (out_failed) {
		int e = errno;
		bool kept = ct_outfile_discard(&of);
		ct_err("%s: write error: %s%s", out_path, strerror(e),
		       kept ? " (the file was left as it was)" : "");
		rc = CT_EXIT_USAGE;
	} else if (sum.readable == 0 && of.tmp && access(of.target, F_OK) == 0) {
		/* nothing to show: an existing file keeps what it had (a new
		 * one gets the document that says so) */
		ct_outfile_discard(&of);
		ct_err("%s: no readable trace, the file was left as it was", out_path);
		rc = ct_show_exit_code(&sum);
	} else if (ct_outfile_commit(&of, oerr, sizeof oerr) < 0) {
		ct_err("%s", oerr);
		rc = CT_EXIT_USAGE;
	} else {
		rc = ct_show_exit_code(&sum);
	}
done:
	for (int a = 0; arg_err && a < nargs; a++)
		free(arg_err[a]);
	free(arg_err);
	free(more);
	list_free(&list);
	ct_diag_free(it->diag);
	free(ctx.verdicts);
	free(it);
	return rc;
}
