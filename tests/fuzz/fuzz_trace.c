/*
 * Fuzz target: one input is one trace file.  It runs through everything the
 * tracer does with an untrusted file:
 *
 *   ct_trace_open_mem        header validation, layout checks
 *   ct_trace_ctx, _env, _driver  context TLV walk, version parsing
 *   ct_trace_events          slot walk, tag/size checks, enter/exit pairing
 *   ct_rec_next_field ...    field walks of both records of every event
 *   ct_describe              per-event strings (describe.c, describe_ioctl.c)
 *   ct_nv_devmap / decode    the NVIDIA ioctl decoder (nvdecode.c) + its JSON
 *   ct_diag_*                the streaming diagnosis (diag.c) + verdict output
 *   show ops                 the text, JSON (and Chrome, when linked) exporters
 *
 * Output goes to a FILE that discards everything (fopencookie), so the
 * exporters' formatting code runs without a system call per line.
 *
 * Built two ways (tests/fuzz/tests.cmake): with clang -fsanitize=fuzzer as a
 * libFuzzer binary, and with replay_main.c as a plain program that replays
 * files (the regression inputs) through the same function, under ASan in the
 * sanitizer sub-build.
 */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "diag.h"
#include "json.h"
#include "nvdecode.h"
#include "show.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the Chrome exporter may not be linked into every tree: use it when present */
extern const struct ct_show_ops ct_show_chrome_ops __attribute__((weak));

static ssize_t sink_write(void *c, const char *buf, size_t n)
{
	(void)c;
	(void)buf;
	return (ssize_t)n;
}

static FILE *sink(void)
{
	static FILE *f;
	static const cookie_io_functions_t io = { .write = sink_write };

	if (!f) {
		f = fopencookie(NULL, "w", io);
		if (!f)
			abort();
	}
	return f;
}

#define FZ_MAX_OPS 3

struct fz {
	struct ct_trace *t;
	uint32_t drv;
	struct ct_desc d;
	struct ct_nv_ioctl nv;
	struct ct_nv_devmap devs;
	struct ct_diag *diag;
	struct ct_json j;
	int nops;
	const struct ct_show_ops *ops[FZ_MAX_OPS];
	struct ct_show_ctx ctx[FZ_MAX_OPS];
	bool live[FZ_MAX_OPS];
	uint64_t sum;             /* keeps field reads from being optimised out */
};

/* every field of one record, and the typed accessors on each tag seen */
static void walk_fields(struct fz *z, const struct ct_recv *r)
{
	struct ct_fieldv f;
	uint32_t pos = 0, u32;
	uint64_t u64;
	char buf[64];

	while (ct_rec_next_field(r, &pos, &f)) {
		z->sum += f.tag + f.len + (f.len ? f.data[0] : 0);
		if (ct_rec_u32(r, f.tag, &u32))
			z->sum += u32;
		if (ct_rec_u64(r, f.tag, &u64))
			z->sum += u64;
		if (ct_rec_str(r, f.tag, buf, sizeof buf))
			z->sum += (unsigned char)buf[0];
	}
}

static int on_event(const struct ct_event *ev, void *user)
{
	struct fz *z = user;
	struct ct_fieldv f;

	if (ev->has_enter)
		walk_fields(z, &ev->enter);
	if (ev->has_exit)
		walk_fields(z, &ev->exit);
	/* exit first, then enter: a few tags of every kind of call */
	static const uint16_t tags[] = { CT_FLD_PATH, CT_FLD_BLOCK, CT_FLD_SYMBOL, CT_FLD_FILLER,
					 CT_FLD__COUNT + 1 };
	for (unsigned i = 0; i < sizeof tags / sizeof tags[0]; i++)
		if (ct_ev_field(ev, tags[i], &f))
			z->sum += f.len;
	z->sum += (uintptr_t)ct_call_name(ev->call)[0] + (unsigned)ct_call_family(ev->call);

	ct_describe(z->t, ev, &z->d);
	ct_nv_devmap_track(&z->devs, ev);
	if (ct_nv_decode(ev, z->drv, &z->devs, &z->nv) == 0)
		ct_nv_json(&z->j, &z->nv);
	ct_json_obj_begin(&z->j);
	ct_json_key(&z->j, "args");
	ct_desc_args_json(&z->j, &z->d);
	ct_json_obj_end(&z->j);
	ct_diag_event(z->diag, ev, &z->d);

	for (int i = 0; i < z->nops; i++) {
		struct ct_show_ctx *c = &z->ctx[i];
		struct ct_show_event se = { ev, &z->d, (unsigned)(ev->index % 5) };
		if (!z->live[i] || !z->ops[i]->event)
			continue;
		if (!c->have_t0) {
			c->t0_ns = ev->t_ns;
			c->have_t0 = true;
		}
		if (z->ops[i]->event(c, &se) != 0)
			z->live[i] = false;
	}
	return 0;
}

/* the second pass: the reader and ct_describe only (the exporters are done) */
static int on_event_again(const struct ct_event *ev, void *user)
{
	struct fz *z = user;

	ct_describe(z->t, ev, &z->d);
	z->sum += z->d.nargs;
	return 0;
}

static void read_context(struct fz *z)
{
	char buf[256];
	uint16_t len;

	for (uint16_t tag = 0; tag < CT_CTX__COUNT + 2; tag++) {
		if (ct_trace_ctx(z->t, tag, 1, &len))
			z->sum += len;
		if (ct_trace_ctx_str(z->t, tag, 0, buf, sizeof buf))
			z->sum += (unsigned char)buf[0];
	}
	if (ct_trace_env(z->t, "CUDA_VISIBLE_DEVICES", buf, sizeof buf))
		z->sum += (unsigned char)buf[0];
	if (ct_trace_env(z->t, "", buf, sizeof buf))
		z->sum += (unsigned char)buf[0];
	z->drv = ct_trace_driver_version(z->t);
	if (ct_trace_driver_version_str(z->t))
		z->sum += 1;
}

static void run_ops_begin(struct fz *z, struct ct_verdict *verdict)
{
	z->nops = 0;
	z->ops[z->nops++] = &ct_show_text_ops;
	z->ops[z->nops++] = &ct_show_json_ops;
	if (&ct_show_chrome_ops)
		z->ops[z->nops++] = &ct_show_chrome_ops;
	for (int i = 0; i < z->nops; i++) {
		struct ct_show_ctx *c = &z->ctx[i];
		memset(c, 0, sizeof *c);
		c->out = sink();
		c->no_time = i == 1;
		c->trace = z->t;
		c->verdicts = verdict;
		c->cap_verdicts = 1;
		z->live[i] = (!z->ops[i]->begin || z->ops[i]->begin(c) == 0) &&
			     (!z->ops[i]->process_begin || z->ops[i]->process_begin(c, z->t) == 0);
	}
}

static void run_ops_end(struct fz *z, const struct ct_verdict *verdict)
{
	for (int i = 0; i < z->nops; i++) {
		struct ct_show_ctx *c = &z->ctx[i];
		c->verdict = verdict;
		c->n_verdicts = 1;
		if (z->live[i] && z->ops[i]->process_end)
			z->ops[i]->process_end(c, z->t, ct_trace_stats(z->t));
		c->trace = NULL;
		if (z->ops[i]->end)
			z->ops[i]->end(c);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz *z;
	struct ct_verdict verdict;
	char err[512];
	FILE *out = sink();

	if (!z && !(z = calloc(1, sizeof *z)))
		abort();
	if (ct_trace_open_mem(data, size, &z->t, err, sizeof err) < 0) {
		/* every refusal must say why */
		if (!err[0] || z->t)
			abort();
		return 0;
	}
	z->diag = ct_diag_new();
	if (!z->diag)
		abort();
	read_context(z);
	ct_nv_devmap_init(&z->devs, z->t);
	ct_json_init(&z->j, out, false);
	ct_json_arr_begin(&z->j);
	ct_diag_begin(z->diag, z->t);
	memset(&verdict, 0, sizeof verdict);
	run_ops_begin(z, &verdict);

	ct_trace_events(z->t, on_event, z);

	ct_diag_end(z->diag, ct_trace_stats(z->t), &verdict);
	ct_verdict_json(&z->j, &verdict);
	ct_json_arr_end(&z->j);
	ct_json_end(&z->j);
	ct_verdict_line(out, &verdict);
	ct_verdict_text(out, &verdict);
	ct_summary_text(out, &verdict, 1, 0);
	run_ops_end(z, &verdict);
	fflush(out);

	/* a second pass must see the same stream (no state left behind) */
	struct ct_trace_stats first = *ct_trace_stats(z->t);
	ct_trace_events(z->t, on_event_again, z);
	if (memcmp(&first, ct_trace_stats(z->t), sizeof first) != 0)
		abort();

	ct_diag_free(z->diag);
	z->diag = NULL;
	ct_trace_close(z->t);
	z->t = NULL;
	return 0;
}
