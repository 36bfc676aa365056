/*
 * rel_check: checks traces of the reliability programs with the tracer's own
 * reader (cutrace_core), exactly, call by call.
 *
 *   rel_check busy TRACE DONEFILE [--hang]
 *       a rel_busy trace whose process died (or finished) without the ring
 *       wrapping: every call DONEFILE says completed is in the trace once,
 *       with enter and exit; beyond that at most the one call per thread
 *       that was in flight, shown as never returned; nothing invented, nothing
 *       twice; torn records at most one per thread; no malformed record.
 *       --hang: thread 0's held ioctl must be there, entered, never returned.
 *   rel_check wrap TRACE DONEFILE
 *       a finished rel_busy trace whose ring wrapped many times: the init
 *       phase is all there; per thread the calls present are a prefix (init
 *       area) and a suffix (the ring's newest records); no call twice, nothing
 *       torn or malformed (beyond what writers lapped by the ring explain,
 *       see excusable()); every record written is accounted for exactly:
 *       records read + partly overwritten + the dropped count (ct_trace_stats) == records written.
 *   rel_check count TRACE
 *       prints the marked ioctls (total, from signal handlers, never returned,
 *       duplicates) and the reader's counters, one key=value per line.
 *   rel_check ctx TRACE
 *       prints cmdline_bytes, cmdline_len, pid, flags and every env entry.
 * Exit: 0 all checks held, 1 a check failed (each failure is printed), 2 usage
 * or unreadable trace.
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rel_common.h"
#include "trace.h"

struct call {
	uint8_t n;          /* events seen for this (thread, seq) */
	bool enter, exit;
	bool hang;          /* the request was REL_NR_HANG */
	uint64_t enter_seq; /* record seq of the enter (UINT64_MAX: none) */
};

/* rel_check count: every (thread, seq) seen, for duplicates */
struct seen {
	uint64_t *keys;
	size_t n, cap;
};

struct chk {
	struct ct_trace *t;
	const struct rel_done *d;
	uint32_t threads;
	uint64_t iters, init;
	struct call *calls;         /* (threads + 1) rows: the last one is the init phase */
	uint64_t marked, from_signal, unfinished, dups, invented, mismatched, unmarked_ioctls;
	uint64_t open_ok, close_ok, other_events;
	struct seen *seen;          /* count mode */
	uint64_t excuse;            /* wrap mode: damage a lapped writer may explain */
	uint64_t excused;
	int fails;
};

/*
 * A writer descheduled for most of a lap of the ring (8 threads on 2 busy
 * cores, a 256K trace) finds at its commit that its slots were reserved
 * again; it does not commit and counts itself in header.dropped (ring.h,
 * ct_ring_commit_at).  Its bytes may have landed in a newer record, which
 * the reader then finds malformed, and with it that record's call.  Each
 * such writer explains at most a few damaged records: the checks below
 * accept that much, and nothing that no lapped writer explains.
 */
static bool excusable(struct chk *c)
{
	if (c->excuse == 0)
		return false;
	c->excuse--;
	c->excused++;
	return true;
}

static void fail(struct chk *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct chk *c, const char *fmt, ...)
{
	va_list ap;

	if (c->fails++ < 30) {
		fputs("FAIL: ", stdout);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		fputc('\n', stdout);
	}
}

static struct call *slot(struct chk *c, uint32_t thread, uint64_t seq)
{
	uint64_t row, len;

	if (thread == REL_INIT_THREAD) {
		row = c->threads;
		len = c->init;
	} else if (thread < c->threads) {
		row = thread;
		len = c->iters;
	} else {
		return NULL;
	}
	if (seq >= len)
		return NULL;
	return &c->calls[row * (c->iters > c->init ? c->iters : c->init) + seq];
}

static bool block_of(const struct ct_recv *r, struct rel_blk *b)
{
	struct ct_fieldv f;

	if (!ct_rec_field(r, CT_FLD_BLOCK, &f) || f.len < sizeof *b)
		return false;
	memcpy(b, f.data, sizeof *b);
	return b->magic == REL_MAGIC;
}

static int on_event(const struct ct_event *ev, void *user)
{
	struct chk *c = user;
	struct rel_blk b, bx;
	bool have = false;
	uint64_t req = 0;

	if (ev->call == CT_CALL_open || ev->call == CT_CALL_open64 || ev->call == CT_CALL_openat ||
	    ev->call == CT_CALL_openat64) {
		c->open_ok += ev->has_exit && ev->ret >= 0;
		return 0;
	}
	if (ev->call == CT_CALL_close) {
		c->close_ok += ev->has_exit && ev->ret == 0;
		return 0;
	}
	if (ev->call != CT_CALL_ioctl) {
		c->other_events++;
		return 0;
	}
	if (ev->has_enter) {
		have = block_of(&ev->enter, &b);
		ct_rec_u64(&ev->enter, CT_FLD_REQUEST, &req);
	}
	if (ev->has_exit && block_of(&ev->exit, &bx)) {
		if (have && (bx.thread != b.thread || bx.seq != b.seq))
			c->mismatched++;
		if (!have)
			b = bx;
		have = true;
	}
	if (!have) {
		c->unmarked_ioctls++;
		return 0;
	}
	c->marked++;
	if (c->seen) {
		struct seen *sn = c->seen;
		if (sn->n == sn->cap) {
			sn->cap = sn->cap ? sn->cap * 2 : 4096;
			sn->keys = realloc(sn->keys, sn->cap * sizeof *sn->keys);
			if (!sn->keys)
				exit(2);
		}
		sn->keys[sn->n++] = (uint64_t)b.thread << 40 | (b.seq & ((1ull << 40) - 1));
	}
	if ((req & 0xff) == REL_NR_SIGNAL)
		c->from_signal++;
	if (ev->has_enter && !ev->has_exit)
		c->unfinished++;
	if (!c->calls)
		return 0;
	struct call *k = slot(c, b.thread, b.seq);
	if (!k) {
		c->invented++;
		fail(c, "call thread %u seq %llu is not one the program made", b.thread,
		     (unsigned long long)b.seq);
		return 0;
	}
	if (k->n++) {
		c->dups++;
		fail(c, "call thread %u seq %llu appears %u times", b.thread, (unsigned long long)b.seq, k->n);
	}
	k->enter |= ev->has_enter;
	k->exit |= ev->has_exit;
	k->hang |= (req & 0xff) == REL_NR_HANG;
	k->enter_seq = ev->has_enter ? ev->seq : UINT64_MAX;
	return 0;
}

static int open_trace(const char *path, struct ct_trace **t)
{
	char err[512];

	if (ct_trace_open(path, t, err, sizeof err) < 0) {
		printf("FAIL: %s: %s\n", path, err);
		return -1;
	}
	return 0;
}

static const struct rel_done *read_done(const char *path)
{
	int fd = open(path, O_RDONLY);
	void *m;

	if (fd < 0) {
		perror(path);
		return NULL;
	}
	m = mmap(NULL, sizeof(struct rel_done), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED || ((const struct rel_done *)m)->magic != REL_DONE_MAGIC) {
		fprintf(stderr, "rel_check: %s is not a rel_busy done file\n", path);
		return NULL;
	}
	return m;
}

static int setup(struct chk *c, const char *trace, const char *donefile)
{
	memset(c, 0, sizeof *c);
	c->d = read_done(donefile);
	if (!c->d || open_trace(trace, &c->t) < 0)
		return -1;
	c->threads = c->d->threads;
	c->iters = c->d->iters;
	c->init = c->d->init;
	uint64_t w = c->iters > c->init ? c->iters : c->init;
	c->calls = calloc((size_t)(c->threads + 1) * (size_t)(w ? w : 1), sizeof *c->calls);
	if (!c->calls)
		return -1;
	ct_trace_events(c->t, on_event, c);
	return 0;
}

static void print_stats(struct chk *c)
{
	const struct ct_trace_stats *s = ct_trace_stats(c->t);
	const struct cutrace_header *h = ct_trace_header(c->t);

	printf("marked=%llu unfinished=%llu torn=%llu malformed=%llu overwritten=%llu records=%llu "
	       "dropped=%llu lost=%llu orphan_exits=%llu exited=%d\n",
	       (unsigned long long)c->marked, (unsigned long long)c->unfinished,
	       (unsigned long long)s->torn, (unsigned long long)s->bad,
	       (unsigned long long)s->overwritten, (unsigned long long)s->records,
	       (unsigned long long)ct_trace_stats(c->t)->dropped, (unsigned long long)h->lost,
	       (unsigned long long)s->orphan_exits, !!(h->flags & CT_HF_EXITED));
}

static void common_checks(struct chk *c)
{
	const struct ct_trace_stats *s = ct_trace_stats(c->t);

	for (uint64_t i = 0; i < s->bad; i++)
		if (!excusable(c)) {
			fail(c, "%llu malformed record(s)", (unsigned long long)s->bad);
			break;
		}
	/* a lapped writer's bytes in a newer record (excusable()) can also be a
	 * whole block: that record then carries another call's */
	for (uint64_t i = 0; i < c->mismatched; i++)
		if (!excusable(c)) {
			fail(c, "%llu exit record(s) carry another call's block",
			     (unsigned long long)c->mismatched);
			break;
		}
	if (c->unmarked_ioctls)
		fail(c, "%llu ioctl(s) without the marker block", (unsigned long long)c->unmarked_ioctls);
	if (ct_trace_header(c->t)->lost)
		fail(c, "header says %llu record(s) lost", (unsigned long long)ct_trace_header(c->t)->lost);
}

static int cmd_busy(const char *trace, const char *donefile, bool hang)
{
	struct chk c;
	const struct cutrace_header *h;
	uint64_t inflight = 0;

	if (setup(&c, trace, donefile) < 0)
		return 2;
	h = ct_trace_header(c.t);
	common_checks(&c);
	if (ct_trace_stats(c.t)->dropped || ct_trace_stats(c.t)->overwritten)
		fail(&c, "the ring wrapped (dropped %llu): size the trace for this test",
		     (unsigned long long)ct_trace_stats(c.t)->dropped);
	for (uint32_t row = 0; row <= c.threads; row++) {
		uint32_t thread = row == c.threads ? REL_INIT_THREAD : row;
		uint64_t n = row == c.threads ? c.init : c.iters;
		uint64_t done = row == c.threads ? c.d->init_done : c.d->done[row];
		for (uint64_t s = 0; s < n; s++) {
			struct call *k = slot(&c, thread, s);
			if (s < done) {
				if (!k->n)
					fail(&c, "completed call thread %u seq %llu is missing", thread,
					     (unsigned long long)s);
				else if (!k->enter || !k->exit)
					fail(&c, "completed call thread %u seq %llu lacks its %s", thread,
					     (unsigned long long)s, k->enter ? "exit" : "enter");
			} else if (s == done) {
				/* in flight when the process died: absent, entered, or even returned */
				if (k->n && !k->exit)
					inflight++;
				if (k->n && !k->enter)
					fail(&c, "in-flight call thread %u seq %llu has an exit but no enter",
					     thread, (unsigned long long)s);
			} else if (k->n) {
				fail(&c, "call thread %u seq %llu is in the trace but was never made", thread,
				     (unsigned long long)s);
			}
		}
	}
	if (inflight != c.unfinished)
		fail(&c, "%llu call(s) never returned, but only %llu were in flight",
		     (unsigned long long)c.unfinished, (unsigned long long)inflight);
	if (ct_trace_stats(c.t)->torn > c.threads + 1)
		fail(&c, "%llu torn records for %u threads", (unsigned long long)ct_trace_stats(c.t)->torn,
		     c.threads);
	if (c.d->finished) {
		if (!(h->flags & CT_HF_EXITED))
			fail(&c, "the process exited normally but the EXITED flag is not set");
		if (c.unfinished || ct_trace_stats(c.t)->torn)
			fail(&c, "a finished process has unfinished or torn records");
		if (c.open_ok != 1 || c.close_ok != 1)
			fail(&c, "open/close of the node: %llu/%llu, want 1/1", (unsigned long long)c.open_ok,
			     (unsigned long long)c.close_ok);
	} else if (h->flags & CT_HF_EXITED) {
		fail(&c, "EXITED is set although the process died");
	}
	if (hang) {
		struct call *k = slot(&c, 0, c.d->crash_at);
		if (!k || !k->n || !k->hang || !k->enter || k->exit)
			fail(&c, "thread 0's held ioctl (seq %llu) is not shown as entered and never returned",
			     (unsigned long long)c.d->crash_at);
	}
	print_stats(&c);
	printf("inflight=%llu done=", (unsigned long long)inflight);
	for (uint32_t i = 0; i < c.threads; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)c.d->done[i]);
	printf(" init_done=%llu\n", (unsigned long long)c.d->init_done);
	ct_trace_close(c.t);
	free(c.calls);
	return c.fails ? 1 : 0;
}

static int cmd_wrap(const char *trace, const char *donefile)
{
	struct chk c;
	const struct cutrace_header *h;
	const struct ct_trace_stats *s;
	uint64_t written, survivors = 0, boundary_unfinished = 0, threads_in_ring = 0;

	if (setup(&c, trace, donefile) < 0)
		return 2;
	h = ct_trace_header(c.t);
	s = ct_trace_stats(c.t);
	c.excuse = 4 * h->dropped; /* header.dropped: the lapped writers (format 1.1) */
	common_checks(&c);
	if (!c.d->finished)
		fail(&c, "the program did not finish");
	if (!ct_trace_stats(c.t)->dropped)
		fail(&c, "the ring never wrapped (dropped 0): make the loop longer");
	if (s->torn)
		fail(&c, "%llu torn record(s) in a trace of a finished process", (unsigned long long)s->torn);
	/* the init phase is never overwritten */
	if (c.open_ok != 1)
		fail(&c, "the open of the node (first event) is gone");
	for (uint64_t i = 0; i < c.init; i++) {
		struct call *k = slot(&c, REL_INIT_THREAD, i);
		if (!k->n || !k->enter || !k->exit)
			fail(&c, "init call %llu is gone", (unsigned long long)i);
	}
	/* per thread: present calls = [0, j) in the init area + [k, iters) in the ring */
	for (uint32_t t = 0; t < c.threads; t++) {
		uint64_t i = 0;
		while (i < c.iters && slot(&c, t, i)->n && slot(&c, t, i)->enter_seq < h->init_slots)
			i++;
		while (i < c.iters && !slot(&c, t, i)->n)
			i++;
		uint64_t k = i;
		for (; i < c.iters; i++) {
			struct call *x = slot(&c, t, i);
			if (!x->n && excusable(&c))
				continue;
			if (!x->n) {
				fail(&c, "thread %u: call %llu is missing between surviving calls %llu and %llu",
				     t, (unsigned long long)i, (unsigned long long)k,
				     (unsigned long long)(c.iters - 1));
				break;
			}
			survivors++;
		}
		if (k < c.iters)
			threads_in_ring++;
	}
	/* calls whose enter is in the init area and whose exit went to the ring */
	for (uint32_t t = 0; t < c.threads; t++)
		for (uint64_t i = 0; i < c.iters; i++) {
			struct call *x = slot(&c, t, i);
			if (x->n && x->enter && !x->exit) {
				if (x->enter_seq < h->init_slots)
					boundary_unfinished++;
				else if (!excusable(&c))
					fail(&c, "thread %u call %llu shows as never returned", t,
					     (unsigned long long)i);
			}
		}
	if (c.close_ok != 1)
		fail(&c, "the close of the node (last event) is gone");
	if (!survivors)
		fail(&c, "no call of the loop survived in the ring");
	/* open + init + loop + close, enter and exit each */
	written = 2 * (1 + c.init + (uint64_t)c.threads * c.iters + 1);
	if (s->records + s->overwritten + ct_trace_stats(c.t)->dropped != written)
		fail(&c, "records %llu + overwritten %llu + dropped %llu != %llu written",
		     (unsigned long long)s->records, (unsigned long long)s->overwritten,
		     (unsigned long long)ct_trace_stats(c.t)->dropped, (unsigned long long)written);
	print_stats(&c);
	printf("written=%llu ring_survivors=%llu threads_in_ring=%llu init_exit_lost=%llu init_slots=%llu "
	       "ring_slots=%llu lapped_writers=%llu excused=%llu\n",
	       (unsigned long long)written, (unsigned long long)survivors, (unsigned long long)threads_in_ring,
	       (unsigned long long)boundary_unfinished, (unsigned long long)h->init_slots,
	       (unsigned long long)h->ring_slots, (unsigned long long)h->dropped,
	       (unsigned long long)c.excused);
	ct_trace_close(c.t);
	free(c.calls);
	return c.fails ? 1 : 0;
}


static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmd_count(const char *trace)
{
	struct chk c;
	struct seen sn = { 0 };
	uint64_t dups = 0;

	memset(&c, 0, sizeof c);
	if (open_trace(trace, &c.t) < 0)
		return 2;
	c.seen = &sn;
	ct_trace_events(c.t, on_event, &c);
	if (sn.n)
		qsort(sn.keys, sn.n, sizeof *sn.keys, key_cmp);
	for (size_t i = 1; i < sn.n; i++)
		dups += sn.keys[i] == sn.keys[i - 1];
	print_stats(&c);
	printf("from_signal=%llu dups=%llu opens=%llu closes=%llu other=%llu mismatched=%llu unmarked=%llu\n",
	       (unsigned long long)c.from_signal, (unsigned long long)dups,
	       (unsigned long long)c.open_ok, (unsigned long long)c.close_ok,
	       (unsigned long long)c.other_events, (unsigned long long)c.mismatched,
	       (unsigned long long)c.unmarked_ioctls);
	free(sn.keys);
	ct_trace_close(c.t);
	return 0;
}

static int cmd_ctx(const char *trace)
{
	struct ct_trace *t;
	uint16_t len;
	const unsigned char *d;
	uint32_t full = 0;
	char buf[8192];

	if (open_trace(trace, &t) < 0)
		return 2;
	d = ct_trace_ctx(t, CT_CTX_CMDLINE, 0, &len);
	printf("cmdline_bytes=%u\n", d ? len : 0);
	d = ct_trace_ctx(t, CT_CTX_CMDLINE_LEN, 0, &len);
	if (d && len == 4)
		memcpy(&full, d, 4);
	printf("cmdline_len=%u\n", full);
	printf("pid=%u flags=0x%x\n", ct_trace_header(t)->pid, ct_trace_header(t)->flags);
	for (unsigned i = 0; ct_trace_ctx_str(t, CT_CTX_ENV, i, buf, sizeof buf); i++)
		printf("env=%s\n", buf);
	ct_trace_close(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "busy"))
		return cmd_busy(argv[2], argv[3], argc > 4 && !strcmp(argv[4], "--hang"));
	if (argc == 4 && !strcmp(argv[1], "wrap"))
		return cmd_wrap(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "count"))
		return cmd_count(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "ctx"))
		return cmd_ctx(argv[2]);
	fprintf(stderr, "usage: rel_check busy|wrap TRACE DONEFILE | count|ctx TRACE\n");
	return 2;
}
