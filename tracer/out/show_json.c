/*
 * cutrace show --json: one JSON document, events streamed as they are read
 * (nothing is held per event).  The schema is documented in tracer/JSON.md;
 * keep the two in step.
 */
#include "show.h"
#include "json.h"
#include "tracer.h"

#include <stdlib.h>
#include <string.h>
#include "fmt.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
#define vsnprintf ct_vsnprintf

#define CT_SHOW_JSON_VERSION "1.0"

struct bad_file {
	char *path, *why;
};

struct json_state {
	struct ct_json j;
	struct bad_file *bad;
	size_t nbad, capbad;
};

static struct json_state *js(struct ct_show_ctx *c)
{
	return c->priv;
}

static int json_begin(struct ct_show_ctx *c)
{
	struct json_state *s = calloc(1, sizeof *s);

	if (!s)
		return -1;
	c->priv = s;
	ct_json_init(&s->j, c->out, true);
	ct_json_obj_begin(&s->j);
	ct_json_kstr(&s->j, "cutrace_version", CUTRACE_VERSION);
	ct_json_kstr(&s->j, "format_version", CT_SHOW_JSON_VERSION);
	/* --no-time: no times, addresses as "<addr>", pids as ordinals unless --pids */
	ct_json_kbool(&s->j, "no_time", c->no_time);
	ct_json_kbool(&s->j, "real_pids", !ct_stable_ids());
	ct_json_key(&s->j, "processes");
	ct_json_arr_begin(&s->j);
	return 0;
}

static void json_bad_file(struct ct_show_ctx *c, const char *path, const char *why)
{
	struct json_state *s = js(c);

	if (s->nbad == s->capbad) {
		size_t ncap = s->capbad ? s->capbad * 2 : 8;
		struct bad_file *nb = realloc(s->bad, ncap * sizeof *nb);
		if (!nb)
			return;
		s->bad = nb;
		s->capbad = ncap;
	}
	s->bad[s->nbad].path = strdup(path);
	s->bad[s->nbad].why = strdup(why);
	s->nbad++;
}

static int json_end(struct ct_show_ctx *c)
{
	struct json_state *s = js(c);
	struct ct_json *j = &s->j;

	ct_json_arr_end(j);
	/* the job: healthy and failed processes, failures grouped by verdict */
	ct_json_key(j, "summary");
	ct_summary_json(j, c->verdicts, c->n_verdicts, c->n_unreadable);
	/* files that could not be read: the same messages as on stderr */
	ct_json_key(j, "errors");
	ct_json_arr_begin(j);
	for (size_t i = 0; i < s->nbad; i++) {
		ct_json_obj_begin(j);
		ct_json_kstr(j, "file", s->bad[i].path);
		ct_json_kstr(j, "error", s->bad[i].why);
		ct_json_obj_end(j);
		free(s->bad[i].path);
		free(s->bad[i].why);
	}
	ct_json_arr_end(j);
	ct_json_obj_end(j);
	ct_json_end(j);
	free(s->bad);
	free(s);
	c->priv = NULL;
	return ferror(c->out) ? -1 : 0;
}

/* a context string field as a JSON string, or null */
static void kctx(struct ct_json *j, struct ct_trace *t, const char *key, uint16_t tag)
{
	uint16_t len;
	const unsigned char *p = ct_trace_ctx(t, tag, 0, &len);

	ct_json_key(j, key);
	if (p)
		ct_json_strn(j, (const char *)p, len);
	else
		ct_json_null(j);
}

static void cmdline(struct ct_json *j, struct ct_trace *t)
{
	uint16_t len, fll;
	const unsigned char *p = ct_trace_ctx(t, CT_CTX_CMDLINE, 0, &len);
	const unsigned char *fl = ct_trace_ctx(t, CT_CTX_CMDLINE_LEN, 0, &fll);
	uint32_t full = 0;
	size_t i = 0;

	ct_json_key(j, "cmdline");
	ct_json_arr_begin(j);
	while (p && i < len) {
		size_t k = i;
		while (k < len && p[k])
			k++;
		ct_json_strn(j, (const char *)p + i, k - i);
		i = k + 1;
	}
	ct_json_arr_end(j);
	if (fl && fll == 4)
		memcpy(&full, fl, 4);
	ct_json_kbool(j, "cmdline_truncated", p && full > len);
}

/* an environment value: under --no-time CUTRACE_DIR=.../run-<time> */
static void env_value(struct ct_json *j, const char *v, size_t n)
{
	char in[4096], out[4096];
	const char *shown;

	if (!ct_stable() || n >= sizeof in || memchr(v, '\0', n)) {
		ct_json_strn(j, v, n);
		return;
	}
	memcpy(in, v, n);
	in[n] = '\0';
	shown = ct_stable_rundir(in, out, sizeof out);
	ct_json_strn(j, shown, strlen(shown));
}

static int json_process_begin(struct ct_show_ctx *c, struct ct_trace *t)
{
	const struct cutrace_header *h = ct_trace_header(t);
	struct ct_json *j = &js(c)->j;
	char ver[16];
	uint16_t len;
	const unsigned char *p;

	ct_json_obj_begin(j);
	char path[4096];
	ct_json_kstr(j, "file", ct_stable_path(ct_trace_path(t), h->pid, path, sizeof path));
	snprintf(ver, sizeof ver, "%u.%u", h->version_major, h->version_minor);
	ct_json_kstr(j, "trace_format", ver);
	ct_json_kuint(j, "pid", ct_stable_id(h->pid));
	ct_json_kuint(j, "ppid", ct_stable_id(h->ppid));
	kctx(j, t, "exe", CT_CTX_EXE);
	cmdline(j, t);
	kctx(j, t, "cwd", CT_CTX_CWD);
	kctx(j, t, "host", CT_CTX_HOST);
	kctx(j, t, "kernel", CT_CTX_KERNEL);
	kctx(j, t, "machine", CT_CTX_MACHINE);
	ct_json_kuint(j, "uid", h->uid);
	ct_json_kuint(j, "gid", h->gid);
	ct_json_kuint(j, "euid", h->euid);
	ct_json_kuint(j, "egid", h->egid);
	if (!c->no_time) {
		ct_json_kuint(j, "start_realtime_ns", h->start_realtime_ns);
		ct_json_kuint(j, "start_mono_ns", h->start_mono_ns);
	}
	ct_json_kuint(j, "writer_version", h->writer_version);
	ct_json_kstr(j, "driver_version", ct_trace_driver_version_str(t));
	ct_json_kuint(j, "driver_version_code", ct_trace_driver_version(t));
	kctx(j, t, "nvidia_version_text", CT_CTX_NV_VERSION);
	kctx(j, t, "nvidia_module_version", CT_CTX_NV_MODVERSION);
	ct_json_key(j, "devices");
	ct_json_arr_begin(j);
	for (unsigned i = 0; (p = ct_trace_ctx(t, CT_CTX_DEVICES, i, &len)); i++)
		ct_json_strn(j, (const char *)p, len);
	ct_json_arr_end(j);
	ct_json_key(j, "env");
	ct_json_obj_begin(j);
	for (unsigned i = 0; (p = ct_trace_ctx(t, CT_CTX_ENV, i, &len)); i++) {
		const unsigned char *eq = memchr(p, '=', len);
		char name[256];
		size_t n = eq ? (size_t)(eq - p) : len;
		if (n >= sizeof name)
			continue;
		memcpy(name, p, n);
		name[n] = 0;
		ct_json_key(j, name);
		if (eq)
			env_value(j, (const char *)eq + 1, len - n - 1);
		else
			ct_json_null(j);
	}
	ct_json_obj_end(j);
	kctx(j, t, "inject_rules", CT_CTX_INJECT);
	/* since 1.3: how libraries are found */
	kctx(j, t, "interp", CT_CTX_INTERP);
	ct_json_key(j, "ld_conf_dropins");
	ct_json_arr_begin(j);
	for (unsigned i = 0; (p = ct_trace_ctx(t, CT_CTX_LDCONF, i, &len)); i++)
		ct_json_strn(j, (const char *)p, len);
	ct_json_arr_end(j);
	kctx(j, t, "ld_preload_file", CT_CTX_PRELOAD_FILE);
	ct_json_key(j, "context_unknown");
	ct_json_arr_begin(j);
	{
		uint16_t tag;
		for (unsigned i = 0; (p = ct_trace_ctx_unknown(t, i, &tag, &len)); i++) {
			ct_json_obj_begin(j);
			ct_json_kuint(j, "key", tag);
			ct_json_key(j, "value");
			ct_json_strn(j, (const char *)p, len);
			ct_json_obj_end(j);
		}
	}
	ct_json_arr_end(j);
	ct_json_kbool(j, "context_damaged", ct_trace_ctx_damaged(t));
	ct_json_key(j, "notes");
	ct_json_arr_begin(j);
	for (unsigned i = 0; (p = ct_trace_ctx(t, CT_CTX_NOTE, i, &len)); i++)
		ct_json_strn(j, (const char *)p, len);
	ct_json_arr_end(j);
	ct_json_key(j, "flags");
	ct_json_obj_begin(j);
	ct_json_kbool(j, "degraded", ct_trace_degraded(t));
	ct_json_kbool(j, "exited", h->flags & CT_HF_EXITED);
	ct_json_kbool(j, "forked", h->flags & CT_HF_FORKED);
	ct_json_kbool(j, "inject", h->flags & CT_HF_INJECT);
	ct_json_kbool(j, "inject_malformed", h->flags & CT_HF_INJECT_BAD);
	ct_json_obj_end(j);
	ct_json_key(j, "events");
	ct_json_arr_begin(j);
	return ferror(c->out) ? -1 : 0;
}

/*
 * One event: a compact object on its own line of the pretty document,
 * written directly (json.h) inside the object that ct_json_obj_begin
 * starts; the same bytes as the ct_json_k* calls, without their separator
 * bookkeeping per key.
 */
static int json_event(struct ct_show_ctx *c, const struct ct_show_event *e)
{
	const struct ct_event *ev = e->ev;
	const struct ct_desc *d = e->d;
	const struct cutrace_header *h = ct_trace_header(c->trace);
	struct ct_json *j = &js(c)->j;
	char *o;

	ct_json_obj_begin(j);
	/* one event per line: compact inside, so a big trace stays small */
	j->pretty = false;
	/* names from cutrace's tables ("call#N" / "action#N" otherwise) and
	 * the decoder's own formatting need no escaping */
	o = ct_jw_need(j, ct_json_at(j), 64);
	o = CT_JW_LIT(o, "\"seq\":");
	o = ct_jw_u64(o, ev->seq);
	o = d->is_note ? CT_JW_LIT(o, ",\"type\":\"note\"") : CT_JW_LIT(o, ",\"type\":\"call\"");
	o = CT_JW_KPLAIN(j, o, "\"call\"", d->call);
	o = ct_jw_need(j, o, 64);
	o = CT_JW_KPLAIN(j, o, "\"family\"", d->family);
	/* numbers and booleans up to the target: at most 200 bytes */
	o = ct_jw_need(j, o, 256);
	o = CT_JW_LIT(o, ",\"tid\":");
	o = ct_jw_u64(o, ct_stable_id(ev->tid));
	if (!c->no_time) {
		o = CT_JW_LIT(o, ",\"t_ns\":");
		o = ct_jw_i64(o, (int64_t)(ev->t_ns - h->start_mono_ns));
		o = CT_JW_LIT(o, ",\"dur_ns\":");
		if (ev->has_exit && ev->has_enter)
			o = ct_jw_u64(o, ev->dur_ns);
		else
			o = CT_JW_LIT(o, "null");
	}
	o = CT_JW_LIT(o, ",\"depth\":");
	o = ct_jw_u64(o, e->depth);
	o = CT_JW_LIT(o, ",\"returned\":");
	o = ct_jw_bool(o, d->returned);
	if (!d->returned && ev->exit_unknown)
		o = CT_JW_LIT(o, ",\"exit_unknown\":true");
	o = CT_JW_LIT(o, ",\"has_enter\":");
	o = ct_jw_bool(o, ev->has_enter);
	o = CT_JW_LIT(o, ",\"target\":");
	o = CT_JW_STR_ARR(j, o, d->target);
	o = ct_desc_result_at(j, o, d);
	o = ct_jw_need(j, o, 128);
	o = CT_JW_LIT(o, ",\"ok\":");
	o = ct_jw_bool(o, d->ok);
	o = CT_JW_LIT(o, ",\"injected\":");
	o = ct_jw_bool(o, d->injected);
	if (d->has_inject) {
		char buf[24];
		o = CT_JW_LIT(o, ",\"inject\":{\"rule\":");
		o = ct_jw_u64(o, d->inject_rule);
		o = CT_JW_KPLAIN(j, o, "\"action\"", ct_inject_action_name(d->inject_action, buf, sizeof buf));
		o = ct_jw_need(j, o, 128);
		*o++ = '}';
	}
	o = CT_JW_LIT(o, ",\"record_flags\":");
	o = ct_jw_u64(o, ev->flags);
	if (d->is_ioctl) {
		o = ct_jw_need(j, o, 64);
		o = CT_JW_KPLAIN(j, o, "\"name\"", d->ioctl.name);
		o = ct_jw_need(j, o, 64);
		o = CT_JW_LIT(o, ",\"name_known\":");
		o = ct_jw_bool(o, d->ioctl.named);
		o = CT_JW_KPLAIN(j, o, "\"node\"", d->ioctl.node);
		if (d->ioctl.has_status) {
			o = ct_jw_need(j, o, 64);
			o = CT_JW_LIT(o, ",\"status\":");
			o = ct_jw_u64(o, d->ioctl.status);
			o = CT_JW_KPLAIN(j, o, "\"status_name\"", d->ioctl.status_name);
			o = ct_jw_need(j, o, 64);
			o = CT_JW_LIT(o, ",\"status_is_warning\":");
			o = ct_jw_bool(o, d->ioctl.is_warning);
		}
		if (d->ioctl.detail[0])
			o = CT_JW_STR_ARR(j, CT_JW_LIT(ct_jw_need(j, o, 16), ",\"detail\":"), d->ioctl.detail);
	}
	o = ct_jw_need(j, o, 16);
	o = CT_JW_LIT(o, ",\"args\":");
	o = ct_desc_args_at(j, o, d, ct_desc_json_raw);
	ct_json_done(j, o);
	ct_json_obj_end(j);
	j->pretty = true;
	return ferror(c->out) ? -1 : 0;
}

static int json_process_end(struct ct_show_ctx *c, struct ct_trace *t, const struct ct_trace_stats *st)
{
	const struct cutrace_header *h = ct_trace_header(t);
	struct ct_json *j = &js(c)->j;

	ct_json_arr_end(j);
	ct_json_key(j, "stats");
	ct_json_obj_begin(j);
	ct_json_kuint(j, "records", st->records);
	ct_json_kuint(j, "events", st->events);
	ct_json_kuint(j, "dropped", st->dropped);
	ct_json_kuint(j, "lost", h->lost);
	ct_json_kuint(j, "torn", st->torn);
	ct_json_kuint(j, "exit_unknown", st->exit_unknown);
	ct_json_kuint(j, "overwritten", st->overwritten);
	ct_json_kuint(j, "malformed", st->bad);
	ct_json_kuint(j, "unfinished", st->unfinished);
	ct_json_kuint(j, "orphan_exits", st->orphan_exits);
	char dmg[512];
	ct_json_key(j, "damage");
	if (ct_trace_damage(t, dmg, sizeof dmg))
		ct_json_str(j, dmg);
	else
		ct_json_null(j);
	ct_json_obj_end(j);
	if (c->verdict) {
		ct_json_key(j, "verdict");
		ct_verdict_json(j, c->verdict);
	}
	ct_json_obj_end(j);
	return ferror(c->out) ? -1 : 0;
}

const struct ct_show_ops ct_show_json_ops = {
	.name = "json",
	.wants_args = true,
	.begin = json_begin,
	.process_begin = json_process_begin,
	.event = json_event,
	.process_end = json_process_end,
	.bad_file = json_bad_file,
	.end = json_end,
};
