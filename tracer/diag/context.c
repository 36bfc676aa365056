/*
 * The timeline around a verdict's root step (diag.h, ct_print_step_context):
 * what `cutrace run` shows of a failure.
 */
#include "diag.h"

/* every text here goes into a fixed buffer and is cut, on purpose, at its end */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "tracer.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
#define vsnprintf ct_vsnprintf

/* ---- the timeline around the root step --------------------------------------------------- */
#define CTX_LINES 64
struct ctx_run {
	const struct ct_trace *t;
	struct ct_desc desc;
	uint64_t t0;
	bool have_t0;
	uint64_t target;
	unsigned n, after_left;
	bool found;
	char ring[CTX_LINES][400];
	unsigned head, count;
	FILE *f;
};

static void fmt_line(struct ctx_run *r, const struct ct_event *ev, char *out, size_t len)
{
	const struct ct_desc *d = &r->desc;
	double ms = ((double)ev->t_ns - (double)r->t0) / 1e6;
	char at[32] = "";
	const char *mark = !d->returned ? "  NEVER RETURNED" : !d->ok ? "  FAILED" : "";

	/* the ioctl as describe decoded it (with the trace's device map) */
	const struct ct_nv_ioctl *nv = d->is_ioctl ? d->nv : NULL;

	/* the time after the process's first event, none under --no-time */
	if (!ct_stable())
		snprintf(at, sizeof at, "%+11.3f ms  ", ms);
	if (nv && nv->family != CT_NV_FAM_NOT_NVIDIA)
		snprintf(out, len, "%sioctl(%d (%s), %s)%s%s%s", at, nv->fd, nv->node_name, nv->summary,
			 nv->ok || nv->is_warning ? (d->returned ? "" : mark) : "  FAILED",
			 d->injected ? "  [injected]" : "", "");
	else
		snprintf(out, len, "%s%s(%s) = %s%s%s%s%s", at, d->call, d->text_args, d->result,
			 d->detail[0] ? "  " : "", d->detail, mark,
			 d->injected && !d->has_inject ? "  [injected]" : "");
}

static int ctx_cb(const struct ct_event *ev, void *user)
{
	struct ctx_run *r = user;

	if (!r->have_t0) {
		r->t0 = ev->t_ns;
		r->have_t0 = true;
	}
	if (r->found && !r->after_left)
		return 1;
	ct_describe_ex(r->t, ev, &r->desc, 0);
	if (!r->found) {
		fmt_line(r, ev, r->ring[r->head], sizeof r->ring[0]);
		r->head = (r->head + 1) % CTX_LINES;
		if (r->count < CTX_LINES)
			r->count++;
		if (ev->seq == r->target) {
			unsigned k = r->count < r->n + 1 ? r->count : r->n + 1;
			for (unsigned i = 0; i < k; i++) {
				unsigned idx = (r->head + CTX_LINES - k + i) % CTX_LINES;
				fprintf(r->f, "  %s %s\n", i + 1 == k ? ">>" : "  ", r->ring[idx]);
			}
			r->found = true;
			r->after_left = r->n;
		}
		return 0;
	}
	char line[400];
	fmt_line(r, ev, line, sizeof line);
	fprintf(r->f, "     %s\n", line);
	r->after_left--;
	return 0;
}

int ct_print_step_context(FILE *f, const char *path, const struct ct_verdict *v, unsigned n)
{
	struct ct_trace *t;
	struct ctx_run *r;
	char err[256];

	if (!v->step.set)
		return 0;
	if (ct_trace_open(path, &t, err, sizeof err) < 0)
		return -1;
	r = calloc(1, sizeof *r);
	if (!r) {
		ct_trace_close(t);
		return -1;
	}
	r->t = t;
	r->target = v->step.seq;
	r->n = n < CTX_LINES - 1 ? n : CTX_LINES - 1;
	r->f = f;
	ct_trace_events(t, ctx_cb, r);
	free(r);
	ct_trace_close(t);
	return 0;
}
