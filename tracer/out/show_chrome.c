/*
 * cutrace show --format=chrome: the Chrome trace-event JSON that
 * ui.perfetto.dev and chrome://tracing open.
 *
 * Format: "Trace Event Format" (Google, public document): an object with
 * "traceEvents" (complete events "X", begin "B" / end "E", instant "i",
 * metadata "M"), "displayTimeUnit" and a free-form "metadata" object; ts and
 * dur are microseconds, fractions allowed.
 *
 *  - one track per process and thread: pid/tid are the traced ones, with
 *    process_name / thread_name / process_sort_index metadata.  Several
 *    traces may carry the same pid or tid (containers, other hosts): the
 *    viewers key threads by tid across processes, so a pid or tid already
 *    used by an earlier trace is replaced by a free number >= 2^22 (above
 *    any Linux pid_max); the real ones stay in the names and in args.
 *  - every call that returned is one "X" event: name = the call, for NVIDIA
 *    ioctls the decoded escape ("RM_CONTROL NV0000_CTRL_CMD_GPU_ATTACH_IDS"),
 *    cat = family, the description in args.  Failures and injected results
 *    are named "FAILED ..." / "INJECTED ..." and coloured (cname).
 *  - a call that never returned is a "B" without "E": both viewers draw it
 *    to the end of the trace ("Did not end").  If the call it ran inside did
 *    return (the exit record was lost), an "E" at that call's end keeps the
 *    slices nested, as the viewers require.
 *  - shim notes are instant events; the diagnosis verdict is an instant at
 *    the end of each process plus a process_labels entry.
 *
 * Time: all processes share one axis, ts = realtime of the event, counted
 * from 00:00 UTC of the day before the first process started
 * (metadata.time_base_realtime_ns).  The event's realtime is its process's
 * start_realtime_ns + (t_ns - start_mono_ns).  A small base keeps ts exact
 * to the nanosecond in a double (epoch microseconds would be ~2^50: 0.25 us
 * steps), and it is fixed before any later file is seen, so output streams.
 * ts and dur are written from integers ("12.345"), never through a double.
 *
 * --no-time does not apply: the viewers need times to lay events out.
 *
 * Memory: nothing is held per event; per thread a small stack of open calls,
 * per output the set of pids/tids handed out.
 */
#include "show.h"
#include "json.h"
#include "nvdecode.h"
#include "tracer.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "fmt.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
#define vsnprintf ct_vsnprintf

#define CT_CHROME_FORMAT_VERSION "1.0"
#define CT_CHROME_DEPTH 32               /* open calls tracked per thread */
#define CT_CHROME_SYNTH_ID (1u << 22)    /* first replacement pid/tid (pid_max limit) */
#define CT_DAY_NS (86400ull * 1000000000ull)

/* ---- the set of pids and tids used so far (open addressing) ------------------- */

struct idset {
	uint64_t *slot;          /* id + 1, 0 empty */
	size_t cap, n;
};

static size_t id_hash(uint32_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b1u) & (cap - 1));
}

static bool idset_has(const struct idset *s, uint32_t id)
{
	if (!s->cap)
		return false;
	for (size_t i = id_hash(id, s->cap);; i = (i + 1) & (s->cap - 1)) {
		if (!s->slot[i])
			return false;
		if (s->slot[i] == (uint64_t)id + 1)
			return true;
	}
}

static int idset_add(struct idset *s, uint32_t id)
{
	if ((s->n + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256;
		uint64_t *ns = calloc(ncap, sizeof *ns);
		if (!ns)
			return -1;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slot[i])
				continue;
			size_t k = id_hash((uint32_t)(s->slot[i] - 1), ncap);
			while (ns[k])
				k = (k + 1) & (ncap - 1);
			ns[k] = s->slot[i];
		}
		free(s->slot);
		s->slot = ns;
		s->cap = ncap;
	}
	size_t i = id_hash(id, s->cap);
	while (s->slot[i] && s->slot[i] != (uint64_t)id + 1)
		i = (i + 1) & (s->cap - 1);
	if (!s->slot[i]) {
		s->slot[i] = (uint64_t)id + 1;
		s->n++;
	}
	return 0;
}

/* ---- state ---------------------------------------------------------------------- */

struct open_call {
	uint64_t end;            /* monotonic end, UINT64_MAX: never returned */
	bool b;                  /* written as "B" (needs an "E" if its parent ends) */
	char name[120];          /* the B's name: an "E" must repeat it */
};

struct thr {
	uint32_t tid, ctid;      /* traced tid, tid in the output */
	/* the same for every call of the thread, written once:
	 * ,"pid":N,"tid":N,"ts":  and  ,"real_pid":N,"real_tid":N,"fields": */
	char ids[48], real_ids[64];
	size_t nids, nreal_ids;
	unsigned n;
	struct open_call stk[CT_CHROME_DEPTH];
};

struct bad_file {
	char *path, *why;
};

struct chrome_state {
	struct ct_json j;
	struct idset ids;
	uint32_t next_id;
	bool have_base;
	uint64_t base_ns;        /* realtime of ts 0 */
	uint64_t dropped, lost, events;
	unsigned processes, failed;
	struct bad_file *bad;
	size_t nbad, capbad;
	bool warned_early;
	/* the process being written */
	uint32_t pid, cpid;
	int64_t off_ns;          /* ts_ns = t_ns + off_ns */
	uint64_t last_t;         /* latest monotonic time seen (enter or exit) */
	struct thr *thr;
	size_t nthr, capthr, last;
	uint32_t drv;
	struct ct_nv_ioctl nv;           /* scratch when describe did not decode */
	const struct ct_nv_ioctl *nvp;   /* the current ioctl, decoded */
};

static struct chrome_state *cs(struct ct_show_ctx *c)
{
	return c->priv;
}

static uint32_t fresh_id(struct chrome_state *s)
{
	while (idset_has(&s->ids, s->next_id))
		s->next_id++;
	return s->next_id++;
}

/* the id to use for a traced pid/tid: itself when still free */
static uint32_t claim_id(struct chrome_state *s, uint32_t id)
{
	if (id == 0 || idset_has(&s->ids, id))
		id = fresh_id(s);
	idset_add(&s->ids, id);
	return id;
}

/* ---- writing helpers ----------------------------------------------------------- */

/* key: a microsecond value from integer nanoseconds, exact ("12.345") */
static inline __attribute__((always_inline)) void kusec(struct ct_json *j, const char *key, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	unsigned frac = (unsigned)(a % 1000);
	char b[32], *p = b + sizeof b;

	*--p = (char)('0' + frac % 10);
	*--p = (char)('0' + frac / 10 % 10);
	*--p = (char)('0' + frac / 100);
	*--p = '.';
	p = ct_udec_rev(p, a / 1000);
	if (ns < 0)
		*--p = '-';
	ct_json_key(j, key);
	ct_json_value_rawn(j, p, (size_t)(b + sizeof b - p));
}

/* ts of a monotonic time of the current process (0 at the earliest) */
static int64_t ts_of(struct chrome_state *s, uint64_t t_ns)
{
	int64_t v = (int64_t)t_ns + s->off_ns;

	if (v < 0) {
		/* only for a process started over a day before the first one */
		if (!s->warned_early) {
			ct_warn("chrome: pid %u started more than a day before the first trace; "
				"its early events are placed at time 0", s->pid);
			s->warned_early = true;
		}
		v = 0;
	}
	return v;
}

/* "ph", "name", "pid", "tid", "ts": the start of every event object */
static void ev_head(struct chrome_state *s, const char *ph, const char *name, uint32_t ctid, int64_t ts)
{
	struct ct_json *j = &s->j;

	ct_json_obj_begin(j);
	ct_json_kstr_plain(j, "ph", ph);
	ct_json_kstr(j, "name", name);
	ct_json_kuint(j, "pid", s->cpid);
	ct_json_kuint(j, "tid", ctid);
	kusec(j, "ts", ts);
}

/* one event per line: a newline after each object of traceEvents */
static void ev_end(struct chrome_state *s)
{
	ct_json_obj_end(&s->j);
	ct_json_raw(&s->j, "\n", 1);
}

static void meta_str(struct chrome_state *s, const char *what, uint32_t ctid, int64_t ts,
		     const char *key, const char *val)
{
	ev_head(s, "M", what, ctid, ts);
	ct_json_key(&s->j, "args");
	ct_json_obj_begin(&s->j);
	ct_json_kstr(&s->j, key, val);
	ct_json_obj_end(&s->j);
	ev_end(s);
}

static void meta_int(struct chrome_state *s, const char *what, uint32_t ctid, int64_t ts,
		     const char *key, int64_t val)
{
	ev_head(s, "M", what, ctid, ts);
	ct_json_key(&s->j, "args");
	ct_json_obj_begin(&s->j);
	ct_json_kint(&s->j, key, val);
	ct_json_obj_end(&s->j);
	ev_end(s);
}

/* ---- begin / end ------------------------------------------------------------------ */

static int chrome_begin(struct ct_show_ctx *c)
{
	struct chrome_state *s = calloc(1, sizeof *s);

	if (!s)
		return -1;
	c->priv = s;
	s->next_id = CT_CHROME_SYNTH_ID;
	ct_json_init(&s->j, c->out, false);
	ct_json_obj_begin(&s->j);
	ct_json_key(&s->j, "traceEvents");
	ct_json_arr_begin(&s->j);
	fputc('\n', c->out);
	return ferror(c->out) ? -1 : 0;
}

static void chrome_bad_file(struct ct_show_ctx *c, const char *path, const char *why)
{
	struct chrome_state *s = cs(c);

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

static int chrome_end(struct ct_show_ctx *c)
{
	struct chrome_state *s = cs(c);
	struct ct_json *j = &s->j;
	int rc;

	ct_json_arr_end(j);
	ct_json_kstr(j, "displayTimeUnit", "ns");
	ct_json_key(j, "metadata");
	ct_json_obj_begin(j);
	ct_json_kstr(j, "cutrace_version", CUTRACE_VERSION);
	ct_json_kstr(j, "format_version", CT_CHROME_FORMAT_VERSION);
	ct_json_kuint(j, "processes", s->processes);
	ct_json_kuint(j, "processes_failed", s->failed);
	ct_json_kuint(j, "events", s->events);
	ct_json_kuint(j, "dropped", s->dropped);
	ct_json_kuint(j, "lost", s->lost);
	ct_json_kstr(j, "time_unit", "us");
	ct_json_kuint(j, "time_base_realtime_ns", s->base_ns);
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
	ct_json_obj_end(j);
	ct_json_end(j);
	rc = ferror(c->out) ? -1 : 0;
	free(s->bad);
	free(s->ids.slot);
	free(s->thr);
	free(s);
	c->priv = NULL;
	return rc;
}

/* ---- processes ---------------------------------------------------------------------- */

/* same variables as the diagnosis (diag.c rank_of) */
static int rank_of(const struct ct_trace *t)
{
	static const char *const vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					    "LOCAL_RANK", NULL };
	char buf[32], *end;

	for (int i = 0; vars[i]; i++) {
		if (!ct_trace_env(t, vars[i], buf, sizeof buf) || !buf[0])
			continue;
		long r = strtol(buf, &end, 10);
		if (!*end && r >= 0 && r < 1000000000)
			return (int)r;
	}
	return -1;
}

/* "python3": argv[0]'s base name, else the executable's, else "process" */
static void prog_name(const struct ct_trace *t, char *buf, size_t len)
{
	char tmp[256];
	const char *p = ct_trace_ctx_str(t, CT_CTX_CMDLINE, 0, tmp, sizeof tmp);
	const char *slash;

	if (!p || !*p)
		p = ct_trace_ctx_str(t, CT_CTX_EXE, 0, tmp, sizeof tmp);
	if (!p || !*p)
		p = "process";
	if ((slash = strrchr(p, '/')) && slash[1])
		p = slash + 1;
	snprintf(buf, len, "%s", p);
}

static int chrome_process_begin(struct ct_show_ctx *c, struct ct_trace *t)
{
	struct chrome_state *s = cs(c);
	const struct cutrace_header *h = ct_trace_header(t);
	char prog[128], host[128], name[400];
	int rank = rank_of(t), n;
	int64_t ts0;

	if (!s->have_base) {
		s->base_ns = h->start_realtime_ns / CT_DAY_NS * CT_DAY_NS;
		s->base_ns = s->base_ns >= CT_DAY_NS ? s->base_ns - CT_DAY_NS : 0;
		s->have_base = true;
	}
	s->pid = h->pid;
	s->off_ns = (int64_t)(h->start_realtime_ns - s->base_ns) - (int64_t)h->start_mono_ns;
	s->last_t = h->start_mono_ns;
	s->nthr = 0;
	s->last = 0;
	s->drv = ct_trace_driver_version(t);
	s->cpid = claim_id(s, h->pid);
	s->processes++;
	s->lost += h->lost;

	prog_name(t, prog, sizeof prog);
	n = snprintf(name, sizeof name, "%s (pid %u", prog, h->pid);
	if (ct_trace_ctx_str(t, CT_CTX_HOST, 0, host, sizeof host) && host[0])
		n += snprintf(name + n, sizeof name - (size_t)n, ", host %s", host);
	if (rank >= 0 && n < (int)sizeof name)
		n += snprintf(name + n, sizeof name - (size_t)n, ", rank %d", rank);
	if (n < (int)sizeof name)
		snprintf(name + n, sizeof name - (size_t)n, ")");
	ts0 = ts_of(s, h->start_mono_ns);
	meta_str(s, "process_name", s->cpid, ts0, "name", name);
	/* traces in the order they were given (ranks sort by file name) */
	meta_int(s, "process_sort_index", s->cpid, ts0, "sort_index", (int64_t)s->processes);
	return ferror(c->out) ? -1 : 0;
}

static void thread_ids(const struct chrome_state *s, struct thr *th)
{
	char *o = th->ids;

	o = CT_JW_LIT(o, ",\"pid\":");
	o = ct_jw_u64(o, s->cpid);
	o = CT_JW_LIT(o, ",\"tid\":");
	o = ct_jw_u64(o, th->ctid);
	o = CT_JW_LIT(o, ",\"ts\":");
	th->nids = (size_t)(o - th->ids);
	o = th->real_ids;
	o = CT_JW_LIT(o, ",\"real_pid\":");
	o = ct_jw_u64(o, s->pid);
	o = CT_JW_LIT(o, ",\"real_tid\":");
	o = ct_jw_u64(o, th->tid);
	o = CT_JW_LIT(o, ",\"fields\":");
	th->nreal_ids = (size_t)(o - th->real_ids);
}

/* the thread's state; its thread_name is written when it is first seen */
static struct thr *thread_of(struct chrome_state *s, uint32_t tid, int64_t ts)
{
	char name[48];
	struct thr *th;

	if (s->last < s->nthr && s->thr[s->last].tid == tid)
		return &s->thr[s->last];
	for (size_t i = 0; i < s->nthr; i++)
		if (s->thr[i].tid == tid) {
			s->last = i;
			return &s->thr[i];
		}
	if (s->nthr == s->capthr) {
		size_t ncap = s->capthr ? s->capthr * 2 : 16;
		struct thr *nt = realloc(s->thr, ncap * sizeof *nt);
		if (!nt)
			return NULL;
		s->thr = nt;
		s->capthr = ncap;
	}
	th = &s->thr[s->nthr];
	memset(th, 0, sizeof *th);
	th->tid = tid;
	/* the main thread keeps the process's id, as the viewers expect */
	th->ctid = tid == s->pid ? s->cpid : claim_id(s, tid);
	s->last = s->nthr++;
	thread_ids(s, th);
	if (tid == s->pid)
		snprintf(name, sizeof name, "main");
	else
		snprintf(name, sizeof name, "thread %u", tid);
	meta_str(s, "thread_name", th->ctid, ts, "name", name);
	if (tid == s->pid)
		meta_int(s, "thread_sort_index", th->ctid, ts, "sort_index", 0);
	return th;
}

/*
 * Before an event at monotonic time t: the open calls of its thread that
 * ended by then are done.  A never-returned call ("B") sitting inside one of
 * them gets its "E" at the end of the returned call around it, so that no
 * slice outlives its parent (the viewers drop badly nested slices).  The
 * "E"s are written innermost first: their times only grow, and they are
 * all <= t, so the file stays sorted per thread.
 */
static void close_ended(struct chrome_state *s, struct thr *th, uint64_t t)
{
	unsigned i;

	for (i = 0; i < th->n; i++)
		if (th->stk[i].end != UINT64_MAX && th->stk[i].end <= t)
			break;
	if (i == th->n)
		return;
	for (unsigned k = th->n; k-- > i;) {
		if (!th->stk[k].b)
			continue;
		uint64_t clip = UINT64_MAX;
		for (unsigned p = k; p-- > i && clip == UINT64_MAX;)
			if (th->stk[p].end != UINT64_MAX)
				clip = th->stk[p].end;
		ev_head(s, "E", th->stk[k].name, th->ctid, ts_of(s, clip));
		ct_json_key(&s->j, "args");
		ct_json_obj_begin(&s->j);
		ct_json_kstr(&s->j, "closed_at", "the end of the call it ran inside (its own exit was not recorded)");
		ct_json_obj_end(&s->j);
		ev_end(s);
	}
	th->n = i;
}

/* ---- events ---------------------------------------------------------------------- */

/* the slice name: call, or the decoded NVIDIA request; FAILED / INJECTED marks */
static void slice_name(struct chrome_state *s, const struct ct_show_event *e, char *buf, size_t len)
{
	const struct ct_desc *d = e->d;
	const struct ct_nv_ioctl *nv = s->nvp;
	struct ct_sb b;

	/* a long name is cut (the whole request is in args) */
	ct_sb_init(&b, buf, len);
	ct_sb_str(&b, !d->returned ? "NEVER RETURNED " : !d->ok ? "FAILED " : "");
	if (d->injected)
		ct_sb_str(&b, "INJECTED ");
	if (d->is_ioctl && nv->family != CT_NV_FAM_NOT_NVIDIA && nv->short_name[0]) {
		ct_sb_str(&b, nv->short_name);
		if (nv->args == CT_NV_A_RM_CONTROL || nv->args == CT_NV_A_RM_ALLOC ||
		    nv->args == CT_NV_A_RM_ALLOC_MEMORY) {
			ct_sb_str(&b, " ");
			ct_sb_str(&b, nv->args == CT_NV_A_RM_CONTROL ? nv->u.control.cmd_name :
				      nv->args == CT_NV_A_RM_ALLOC ? nv->u.alloc.class_name :
				      nv->u.alloc_memory.class_name);
		}
		if (nv->via_xfer)
			ct_sb_str(&b, " (XFER)");
	} else if (d->is_ioctl && nv->name[0] && strcmp(nv->name, "ioctl")) {
		ct_sb_str(&b, "ioctl ");
		ct_sb_str(&b, nv->name);
	} else {
		ct_sb_str(&b, d->call);
	}
}

/* ts / dur at o: microseconds from integer nanoseconds, exact ("12.345");
 * at most 26 bytes */
static inline __attribute__((always_inline)) char *jw_usec(char *o, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	unsigned frac = (unsigned)(a % 1000);

	if (ns < 0)
		*o++ = '-';
	o = ct_jw_u64(o, a / 1000);
	o[0] = '.';
	o[1] = (char)('0' + frac / 100);
	o[2] = (char)('0' + frac / 10 % 10);
	o[3] = (char)('0' + frac % 10);
	return o + 4;
}

/* names from the decoder's tables and its own formatting ("_IOC(...)",
 * "class 0x...", "nvidia0") need no escaping; the summary and the warning
 * may quote the trace's strings */
static char *ioctl_args(struct ct_json *j, char *o, const struct ct_desc *d, const struct ct_nv_ioctl *nv)
{
	/* room for the keys and numbers of each run; names ask for their own */
	o = ct_jw_need(j, o, 64);
	o = CT_JW_KPLAIN(j, o, "\"ioctl\"", nv->name[0] ? nv->name : d->ioctl.name);
	o = ct_jw_need(j, o, 64);
	o = CT_JW_KPLAIN(j, o, "\"node\"", nv->node_name[0] ? nv->node_name : d->ioctl.node);
	o = ct_jw_need(j, o, 64);
	o = CT_JW_KPLAIN(j, o, "\"nv_family\"", ct_nv_family_name(nv->family));
	o = ct_jw_need(j, o, 64);
	o = CT_JW_LIT(o, ",\"request\":");
	o = ct_jw_hexnum(o, nv->request);
	if (nv->args == CT_NV_A_RM_CONTROL) {
		o = CT_JW_KPLAIN(j, o, "\"rm_control\"", nv->u.control.cmd_name);
		o = ct_jw_need(j, o, 64);
		o = CT_JW_LIT(o, ",\"rm_control_cmd\":");
		o = ct_jw_hexnum(o, nv->u.control.cmd);
	} else if (nv->args == CT_NV_A_RM_ALLOC) {
		o = CT_JW_KPLAIN(j, o, "\"rm_class\"", nv->u.alloc.class_name);
	} else if (nv->args == CT_NV_A_RM_ALLOC_MEMORY) {
		o = CT_JW_KPLAIN(j, o, "\"rm_class\"", nv->u.alloc_memory.class_name);
	}
	if (nv->has_status || d->ioctl.has_status) {
		bool nvs = nv->has_status;
		o = ct_jw_need(j, o, 64);
		o = CT_JW_LIT(o, ",\"status\":");
		o = ct_jw_u64(o, nvs ? nv->status : d->ioctl.status);
		o = CT_JW_KPLAIN(j, o, "\"status_name\"", nvs ? nv->status_name : d->ioctl.status_name);
		o = ct_jw_need(j, o, 64);
		o = CT_JW_LIT(o, ",\"status_is_warning\":");
		o = ct_jw_bool(o, nvs ? nv->is_warning : d->ioctl.is_warning);
	}
	if (nv->summary[0])
		o = CT_JW_STR_ARR(j, CT_JW_LIT(ct_jw_need(j, o, 16), ",\"decoded\":"), nv->summary);
	if (nv->warning[0])
		o = CT_JW_STR_ARR(j, CT_JW_LIT(ct_jw_need(j, o, 16), ",\"warning\":"), nv->warning);
	return o;
}

/* "args" of a call, from ,"args": to its closing brace, at o */
static char *call_args(struct chrome_state *s, char *o, const struct ct_show_event *e,
		       const struct thr *th)
{
	struct ct_json *j = &s->j;
	const struct ct_event *ev = e->ev;
	const struct ct_desc *d = e->d;
	size_t call_len = strlen(d->call);
	char buf[24];

	/* the call, result and errno names and the inject action come from
	 * tables ("call#N", "action#N" otherwise): no escaping */
	o = ct_jw_need(j, o, 2 * call_len + 64);
	o = CT_JW_LIT(o, ",\"args\":{\"call\":");
	o = ct_jw_plain(o, d->call, call_len);
	/* "call(args) = result  detail", the text timeline's line */
	o = CT_JW_LIT(o, ",\"summary\":\"");
	ct_json_copy_short(o, d->call, call_len);
	o += call_len;
	*o++ = '(';
	o = CT_JW_ESC_ARR(j, o, d->text_args);
	o = ct_jw_need(j, o, 8);
	o = CT_JW_LIT(o, ") = ");
	o = CT_JW_ESC_ARR(j, o, d->result);
	if (d->detail[0]) {
		o = ct_jw_need(j, o, 8);
		o = CT_JW_LIT(o, "  ");
		o = CT_JW_ESC_ARR(j, o, d->detail);
	}
	o = ct_jw_need(j, o, 32);
	o = CT_JW_LIT(o, "\",\"target\":");
	o = CT_JW_STR_ARR(j, o, d->target);
	o = ct_desc_result_at(j, o, d);
	/* ok, failed, injected and the marks: at most 160 bytes */
	o = ct_jw_need(j, o, 192);
	o = d->ok ? CT_JW_LIT(o, ",\"ok\":true,\"failed\":false") : CT_JW_LIT(o, ",\"ok\":false,\"failed\":true");
	o = CT_JW_LIT(o, ",\"injected\":");
	o = ct_jw_bool(o, d->injected);
	if (d->has_inject) {
		o = CT_JW_LIT(o, ",\"inject_rule\":");
		o = ct_jw_u64(o, d->inject_rule);
		o = CT_JW_KPLAIN(j, o, "\"inject_action\"", ct_inject_action_name(d->inject_action, buf, sizeof buf));
		o = ct_jw_need(j, o, 192);
	}
	if (!d->returned)
		o = CT_JW_LIT(o, ",\"never_returned\":true");
	if (!ev->has_enter)
		o = CT_JW_LIT(o, ",\"enter_lost\":true");
	if (d->is_ioctl)
		o = ioctl_args(j, o, d, s->nvp);
	o = ct_jw_need(j, o, 160);
	o = CT_JW_LIT(o, ",\"seq\":");
	o = ct_jw_u64(o, ev->seq);
	o = CT_JW_LIT(o, ",\"depth\":");
	o = ct_jw_u64(o, e->depth);
	ct_json_copy_short(o, th->real_ids, th->nreal_ids);
	o += th->nreal_ids;
	o = ct_desc_args_at(j, o, d, false); /* raw memory left out: its size is kept */
	o = ct_jw_need(j, o, 1);
	*o++ = '}';
	return o;
}

/*
 * One "X" (or "B") event, written directly (json.h): the object, its
 * closing brace and the newline after it.  The same bytes as ev_head +
 * ct_json_* calls, without their separator bookkeeping per key.
 */
static void call_event(struct chrome_state *s, const struct ct_show_event *e, const char *name,
		       size_t name_cap, const struct thr *th, int64_t ts, bool b)
{
	struct ct_json *j = &s->j;
	const struct ct_event *ev = e->ev;
	const struct ct_desc *d = e->d;
	char *o;

	ct_json_value_begin(j);
	o = ct_jw_need(j, ct_json_at(j), 64);
	o = b ? CT_JW_LIT(o, "{\"ph\":\"B\",\"name\":") : CT_JW_LIT(o, "{\"ph\":\"X\",\"name\":");
	o = ct_jw_strz(j, o, name, name_cap);
	o = ct_jw_need(j, o, 160);
	ct_json_copy_short(o, th->ids, th->nids);
	o = jw_usec(o + th->nids, ts);
	if (!b) {
		o = CT_JW_LIT(o, ",\"dur\":");
		o = jw_usec(o, (int64_t)ev->dur_ns);
	}
	o = CT_JW_KPLAIN(j, o, "\"cat\"", d->family);
	o = ct_jw_need(j, o, 32);
	if (!d->returned || !d->ok)
		o = CT_JW_LIT(o, ",\"cname\":\"terrible\"");
	else if (d->injected)
		o = CT_JW_LIT(o, ",\"cname\":\"bad\"");
	o = call_args(s, o, e, th);
	o = ct_jw_need(j, o, 2);
	*o++ = '}';
	*o++ = '\n';
	ct_json_done(j, o);
}

static void write_note(struct chrome_state *s, const struct ct_show_event *e, struct thr *th)
{
	struct ct_json *j = &s->j;
	char name[160];
	struct ct_sb b;

	/* a long name is cut, the whole text is in args */
	ct_sb_init(&b, name, sizeof name);
	ct_sb_str(&b, "note: ");
	ct_sb_str(&b, e->d->target);
	ev_head(s, "i", name, th->ctid, ts_of(s, e->ev->t_ns));
	ct_json_kstr(j, "s", "t");
	ct_json_kstr(j, "cat", e->d->family);
	ct_json_kstr(j, "cname", "yellow");
	ct_json_key(j, "args");
	ct_json_obj_begin(j);
	ct_json_kstr(j, "text", e->d->target);
	ct_json_kuint(j, "seq", e->ev->seq);
	ct_json_obj_end(j);
	ev_end(s);
}

static int chrome_event(struct ct_show_ctx *c, const struct ct_show_event *e)
{
	struct chrome_state *s = cs(c);
	const struct ct_event *ev = e->ev;
	const struct ct_desc *d = e->d;
	int64_t ts = ts_of(s, ev->t_ns);
	struct thr *th;
	char name[sizeof th->stk[0].name];
	bool b;

	s->events++;
	if (!(th = thread_of(s, ev->tid, ts)))
		return -1;
	close_ended(s, th, ev->t_ns);
	if (ev->t_ns + ev->dur_ns > s->last_t)
		s->last_t = ev->t_ns + ev->dur_ns;
	if (d->is_note) {
		write_note(s, e, th);
		return ferror(c->out) ? -1 : 0;
	}
	/* describe decoded the ioctl already, with the device map the reader
	 * keeps for the trace; decoding here is only a fallback */
	if (d->is_ioctl) {
		if (d->nv) {
			s->nvp = d->nv;
		} else {
			ct_nv_decode(ev, s->drv, ct_trace_devmap(c->trace), &s->nv);
			s->nvp = &s->nv;
		}
	}
	slice_name(s, e, name, sizeof name);
	/* an orphan exit (enter lost) is a point at its exit time */
	b = ev->has_enter && !ev->has_exit;
	call_event(s, e, name, sizeof name, th, ts, b);
	if (ev->has_enter && th->n < CT_CHROME_DEPTH) {
		struct open_call *o = &th->stk[th->n++];
		o->end = b ? UINT64_MAX : ev->t_ns + ev->dur_ns;
		o->b = b;
		if (b)
			memcpy(o->name, name, strlen(name) + 1);
		else
			o->name[0] = 0;
	}
	return ferror(c->out) ? -1 : 0;
}

/* the diagnosis: a label on the process and an instant at its end */
static void write_verdict(struct chrome_state *s, struct ct_show_ctx *c, const struct ct_verdict *v)
{
	struct ct_json *j = &s->j;
	int64_t end = ts_of(s, s->last_t);
	char label[200];

	if (v->ok)
		snprintf(label, sizeof label, "OK");
	else
		snprintf(label, sizeof label, "FAILED: %s%s", ct_layer_name(v->layer),
			 v->injected ? " (injected)" : "");
	meta_str(s, "process_labels", s->cpid, end, "labels", label);
	snprintf(label, sizeof label, "VERDICT %s%s%s", v->ok ? "OK" : "FAILED ",
		 v->ok ? "" : ct_layer_name(v->layer), v->injected ? " (injected)" : "");
	ev_head(s, "i", label, s->cpid, end);
	ct_json_kstr(j, "s", "p");
	ct_json_kstr(j, "cat", "verdict");
	ct_json_kstr(j, "cname", v->ok ? "good" : "terrible");
	ct_json_key(j, "args");
	ct_json_obj_begin(j);
	ct_json_kstr(j, "summary", v->summary);
	if (v->fix[0])
		ct_json_kstr(j, "fix", v->fix);
	if (v->step.set) {
		ct_json_kstr(j, "root_step", v->step.text);
		if (c->have_t0)
			kusec(j, "root_step_ts", ts_of(s, c->t0_ns + v->step.t_ns));
	}
	ct_json_key(j, "verdict");
	ct_verdict_json(j, v);
	ct_json_obj_end(j);
	ev_end(s);
}

static int chrome_process_end(struct ct_show_ctx *c, struct ct_trace *t, const struct ct_trace_stats *st)
{
	struct chrome_state *s = cs(c);

	(void)t;
	s->dropped += st->dropped;
	/* the trace is over: never-returned calls inside calls that did return
	 * get their "E"; the outermost stay open ("Did not end") */
	for (size_t i = 0; i < s->nthr; i++)
		close_ended(s, &s->thr[i], UINT64_MAX - 1);
	/* the verdict pointer is set by the iterator before process_end */
	if (c->verdict) {
		write_verdict(s, c, c->verdict);
		if (!c->verdict->ok)
			s->failed++;
	}
	return ferror(c->out) ? -1 : 0;
}

const struct ct_show_ops ct_show_chrome_ops = {
	.name = "chrome",
	.wants_args = true,
	.begin = chrome_begin,
	.process_begin = chrome_process_begin,
	.event = chrome_event,
	.process_end = chrome_process_end,
	.bad_file = chrome_bad_file,
	.end = chrome_end,
};
