/*
 * Streaming a trace (trace.h, ct_trace_events): records in sequence order,
 * enter and exit records paired into events, events delivered in time
 * order, the NVIDIA device map fed on the way.  (Opening and validating
 * the file: trace.c; record fields: fields.c.)
 *
 * Hazards this file is written around:
 *  - The file is untrusted: any header field may be garbage.  Every offset
 *    and count is checked against the real file size before anything is
 *    touched, every loop is bounded by the slot counts so checked, and a
 *    record is only believed after its tags, seq, size and TLV fields agree.
 *  - The file may still be written while we read it (a live process): we
 *    take a private copy of the header once, and field accessors re-check
 *    bounds on every access instead of trusting an earlier validation.
 *  - Memory must not grow with the file: the mapping is read-only and the
 *    pages of consumed windows are given back with MADV_DONTNEED (a later
 *    access simply faults them in again from the file, so pointers held by
 *    pending events stay valid), and pairing uses a bounded FIFO.
 */
#include "read_int.h"
#include "devmap.h"
#include "tracer.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- calls ------------------------------------------------------------------------------- */

static const char *const call_names[CT_CALL__MAX] = {
#define CT_X_NAME(id, name, fam) [id] = #name,
	CUTRACE_CALLS(CT_X_NAME)
#undef CT_X_NAME
};
static const unsigned char call_fams[CT_CALL__MAX] = {
#define CT_X_FAM(id, name, fam) [id] = fam,
	CUTRACE_CALLS(CT_X_FAM)
#undef CT_X_FAM
};

const char *ct_call_name(unsigned call)
{
	static __thread char buf[24];

	if (call < CT_CALL__MAX && call_names[call])
		return call_names[call];
	snprintf(buf, sizeof buf, "call#%u", call);
	return buf;
}

int ct_call_family(unsigned call)
{
	return call < CT_CALL__MAX ? call_fams[call] : 0;
}

/* ---- streaming -------------------------------------------------------------------------- */

static uint64_t phys_of(const struct ct_trace *t, uint64_t s)
{
	if (s < t->hdr.init_slots)
		return s;
	return t->hdr.init_slots + (s - t->hdr.init_slots) % t->hdr.ring_slots;
}

/* Give the pages of physical slots [from, to) (and their tags) back. */
static void drop_pages(struct ct_trace *t, uint64_t from, uint64_t to)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a, b;

	if (!t->mapped || to <= from || pg <= 0)
		return;
	a = ((uintptr_t)(t->slots + from * SLOT) + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	b = (uintptr_t)(t->slots + to * SLOT) & ~((uintptr_t)pg - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
	a = ((uintptr_t)(t->tags + from) + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	b = (uintptr_t)(t->tags + to) & ~((uintptr_t)pg - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

/*
 * Called before reading physical slot p: close the window when it is big, or
 * when the walk jumped (init area -> ring start, ring wrap), so that slots
 * not read yet are not dropped for nothing.  Dropping is only ever a cost,
 * never a correctness issue: a dropped page faults in again from the file.
 */
static void drop_advance(struct ct_trace *t, uint64_t p)
{
	if (p < t->drop_from || p > t->drop_next + CUTRACE_MAX_RECORD / SLOT) {
		drop_pages(t, t->drop_from, t->drop_next);
		t->drop_from = p;
	} else if ((p - t->drop_from) * SLOT >= CT_DROP_WINDOW + CT_DROP_LAG) {
		/* the last CT_DROP_LAG bytes stay: events held back for time
		 * order are read a little behind the walk */
		uint64_t keep = p - CT_DROP_LAG / SLOT;
		drop_pages(t, t->drop_from, keep);
		t->drop_from = keep;
	}
	t->drop_next = p + 1;
}

static int emit(struct ct_trace *t, struct ct_event *ev)
{
	ev->index = t->next_index++;
	t->stats.events++;
	if (ev->type != CT_REC_NOTE && ev->has_enter && !ev->has_exit) {
		t->stats.unfinished++;
		/* its exit, if written, has a higher seq: lost if the ring
		 * overwrote slots after the enter (the enter then is in the init
		 * area: everything older in the ring is gone) */
		if (ev->seq < t->lost_below && t->lost_below > t->hdr.init_slots)
			ev->exit_unknown = true;
		if (ev->exit_unknown)
			t->stats.exit_unknown++;
	}
	if (!ev->has_enter)
		t->stats.orphan_exits++;
	/* opens bind an fd to a device number, closes unbind it: the map is
	 * up to date for the event itself and every later one */
	if (t->devmap && ct_call_family(ev->call) == CT_FAM_IO && ev->call != CT_CALL_ioctl)
		ct_nv_devmap_track(t->devmap, ev);
	return t->cb(ev, t->user);
}

/*
 * Time order.  Pairing yields events in seq order, which is time order for
 * one thread, but writers that record a lot take runs of slots for
 * themselves (format.h, "Runs"), so the runs of two busy threads hold
 * interleaved stretches of time.  Events are held back in a window of
 * CT_ORDER_WINDOW and delivered smallest (time, seq) first: exact whenever
 * no event is displaced by more than the window, which covers 64 threads
 * recording at once with full runs.  Memory stays bounded.
 *
 * Most events come in order: those later than every key in the FIFO are
 * appended to it, in O(1), and only the others go to the heap; the next
 * event out is the smaller of the FIFO's head and the heap's top.  The
 * same order as one heap of all of them (keys are unique: seq is).
 */
static bool okey_less(const struct ct_okey *a, const struct ct_okey *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void oheap_down(struct ct_trace *t, uint32_t i)
{
	struct ct_okey *h = t->oheap, k = h[i];
	uint32_t n = t->ocount;

	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && okey_less(&h[c + 1], &h[c]))
			c++;
		if (!okey_less(&h[c], &k))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = k;
}

static void oheap_up(struct ct_trace *t, uint32_t i)
{
	struct ct_okey *h = t->oheap, k = h[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!okey_less(&k, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = k;
}

static uint32_t order_held(const struct ct_trace *t)
{
	return t->ocount + t->rcount;
}

/* the smallest key held (there is one) */
static const struct ct_okey *order_min(const struct ct_trace *t)
{
	const struct ct_okey *r = t->rcount ? &t->orun[t->rhead] : NULL;

	if (!t->ocount || (r && okey_less(r, &t->oheap[0])))
		return r;
	return &t->oheap[0];
}

/* deliver the earliest held-back event */
static int order_pop(struct ct_trace *t)
{
	const struct ct_okey *m = order_min(t);
	uint32_t idx = m->idx;
	struct ct_event ev = t->opool[idx];

	t->ofree[CT_ORDER_WINDOW - order_held(t)] = idx;
	if (t->rcount && m == &t->orun[t->rhead]) {
		t->rhead = (t->rhead + 1) & (CT_ORDER_WINDOW - 1);
		t->rcount--;
	} else {
		t->oheap[0] = t->oheap[--t->ocount];
		if (t->ocount)
			oheap_down(t, 0);
	}
	return emit(t, &ev);
}

static bool order_alloc(struct ct_trace *t)
{
	t->opool = malloc(CT_ORDER_WINDOW * sizeof *t->opool);
	t->oheap = malloc(CT_ORDER_WINDOW * sizeof *t->oheap);
	t->orun = malloc(CT_ORDER_WINDOW * sizeof *t->orun);
	t->ofree = malloc(CT_ORDER_WINDOW * sizeof *t->ofree);
	if (!t->opool || !t->oheap || !t->orun || !t->ofree) {
		free(t->opool);
		free(t->oheap);
		free(t->orun);
		free(t->ofree);
		t->opool = NULL;
		t->oheap = NULL;
		t->orun = NULL;
		t->ofree = NULL;
		return false;
	}
	for (uint32_t i = 0; i < CT_ORDER_WINDOW; i++)
		t->ofree[i] = CT_ORDER_WINDOW - 1 - i; /* a stack: ofree[0..free) */
	t->ocount = 0;
	t->rhead = t->rcount = 0;
	return true;
}

static void order_free(struct ct_trace *t)
{
	free(t->opool);
	free(t->oheap);
	free(t->orun);
	free(t->ofree);
	t->opool = NULL;
	t->oheap = NULL;
	t->orun = NULL;
	t->ofree = NULL;
	t->ocount = 0;
	t->rhead = t->rcount = 0;
}

static int deliver(struct ct_trace *t, struct ct_event *ev)
{
	struct ct_okey k = { ev->t_ns, ev->seq, 0 };
	int r;

	if (!t->opool && (t->order_off || !order_alloc(t))) {
		t->order_off = true;
		return emit(t, ev);
	}
	if (order_held(t) == CT_ORDER_WINDOW) {
		/* full: an event earlier than everything held goes out at once */
		if (okey_less(&k, order_min(t)))
			return emit(t, ev);
		if ((r = order_pop(t)) != 0)
			return r;
	}
	k.idx = t->ofree[CT_ORDER_WINDOW - 1 - order_held(t)];
	t->opool[k.idx] = *ev;
	if (!t->rcount ||
	    okey_less(&t->orun[(t->rhead + t->rcount - 1) & (CT_ORDER_WINDOW - 1)], &k)) {
		t->orun[(t->rhead + t->rcount) & (CT_ORDER_WINDOW - 1)] = k;
		t->rcount++;
		return 0;
	}
	t->oheap[t->ocount] = k;
	oheap_up(t, t->ocount++);
	return 0;
}

static int order_flush(struct ct_trace *t)
{
	int r;

	/* (opool: nothing is held back when the window could not be allocated) */
	while (t->opool && order_held(t))
		if ((r = order_pop(t)) != 0)
			return r;
	return 0;
}

static struct ct_pend *q_at(struct ct_trace *t, uint32_t i)
{
	return &t->q[(t->qhead + i) & (t->qcap - 1)];
}

/* deliver the complete events at the head of the FIFO */
static int q_flush(struct ct_trace *t, bool all)
{
	int r;

	while (t->qcount && (all || q_at(t, 0)->done)) {
		struct ct_event ev = q_at(t, 0)->ev;
		t->qhead = (t->qhead + 1) & (t->qcap - 1);
		t->qcount--;
		if ((r = deliver(t, &ev)) != 0)
			return r;
	}
	return 0;
}

static bool q_grow(struct ct_trace *t)
{
	uint32_t ncap = t->qcap ? t->qcap * 2 : 256;
	struct ct_pend *nq;

	if (t->qcap >= CT_PAIR_WINDOW || !(nq = malloc((size_t)ncap * sizeof *nq)))
		return false;
	for (uint32_t i = 0; i < t->qcount; i++)
		nq[i] = *q_at(t, i);
	free(t->q);
	t->q = nq;
	t->qcap = ncap;
	t->qhead = 0;
	return true;
}

/* room for one more entry: grow up to the window, then give up the oldest */
static int q_reserve(struct ct_trace *t, struct ct_pend **slot)
{
	int r;

	if (t->qcount == t->qcap && !q_grow(t)) {
		if (!t->qcap)
			return -1; /* not even the first allocation */
		/* the window is full: the oldest call is delivered as unfinished;
		 * should its exit come later it becomes an orphan exit */
		struct ct_event ev = q_at(t, 0)->ev;
		if (!q_at(t, 0)->done)
			ev.exit_unknown = true;
		t->qhead = (t->qhead + 1) & (t->qcap - 1);
		t->qcount--;
		if ((r = deliver(t, &ev)) != 0)
			return r;
		if ((r = q_flush(t, false)) != 0)
			return r;
	}
	*slot = q_at(t, t->qcount++);
	return 0;
}

/* the pending entry for enter seq s (entries are sorted by seq), or NULL */
static struct ct_pend *q_find(struct ct_trace *t, uint64_t s)
{
	uint32_t lo = 0, hi = t->qcount;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct ct_pend *p = q_at(t, mid);
		if (p->ev.seq == s)
			return p;
		if (p->ev.seq < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* type and size are the validated copies: a live file may change under us */
static void fill_recv(struct ct_recv *rv, const struct cutrace_record *rec, unsigned type, uint32_t size)
{
	size_t off = sizeof *rec;

	rv->hdr = rec;
	rv->exit = NULL;
	if (type == CT_REC_EXIT) {
		rv->exit = (const struct cutrace_exit *)(const void *)(rec + 1);
		off += sizeof(struct cutrace_exit);
	}
	rv->fields = (const unsigned char *)rec + off;
	rv->fields_len = size - (uint32_t)off;
}

/* rec: the record in the file; h: its validated header, copied */
static int on_record(struct ct_trace *t, const struct cutrace_record *h, const struct cutrace_record *rec)
{
	struct ct_pend *p;
	struct ct_recv rv;
	int r;

	fill_recv(&rv, rec, h->type, h->size);
	if (h->type == CT_REC_ENTER || h->type == CT_REC_NOTE) {
		if ((r = q_reserve(t, &p)) != 0)
			return r;
		memset(p, 0, sizeof *p);
		p->ev.seq = h->seq;
		p->ev.call = h->call;
		p->ev.type = h->type;
		p->ev.tid = h->tid;
		p->ev.t_ns = h->t_ns;
		p->ev.has_enter = true;
		p->ev.flags = h->flags;
		p->ev.enter = rv;
		p->done = h->type == CT_REC_NOTE;
		return p->done ? q_flush(t, false) : 0;
	}
	/* an exit: pair it with a pending enter of the same call */
	uint64_t es = rv.exit->enter_seq;
	p = es < h->seq ? q_find(t, es) : NULL;
	if (p && !p->done && p->ev.type == CT_REC_ENTER && p->ev.call == h->call) {
		p->done = true;
		p->ev.has_exit = true;
		p->ev.exit = rv;
		p->ev.ret = rv.exit->ret;
		p->ev.err = rv.exit->err;
		p->ev.flags |= h->flags;
		p->ev.dur_ns = h->t_ns >= p->ev.t_ns ? h->t_ns - p->ev.t_ns : 0;
		return q_flush(t, false);
	}
	/* orphan: its enter was overwritten, given up, or never written */
	if ((r = q_reserve(t, &p)) != 0)
		return r;
	memset(p, 0, sizeof *p);
	p->done = true;
	p->ev.seq = h->seq;
	p->ev.call = h->call;
	p->ev.type = CT_REC_ENTER;
	p->ev.tid = h->tid;
	p->ev.t_ns = h->t_ns;
	p->ev.has_exit = true;
	p->ev.exit = rv;
	p->ev.ret = rv.exit->ret;
	p->ev.err = rv.exit->err;
	p->ev.flags = h->flags;
	return q_flush(t, false);
}

/*
 * Look at logical slot s (physical p, in the area ending at physical
 * area_end).  Returns the number of slots to advance (>= 1); *r gets the
 * callback's stop value.
 */
static uint64_t read_slot(struct ct_trace *t, uint64_t s, uint64_t p, uint64_t area_end, int *r)
{
	uint64_t tag = __atomic_load_n(&t->tags[p], __ATOMIC_ACQUIRE);
	const struct cutrace_record *rec;
	struct cutrace_record h;
	struct ct_recv rv;
	uint64_t n;
	uint32_t size;
	unsigned kind = CT_TAG_KIND(tag);

	*r = 0;
	if (CT_TAG_SEQ(tag) != (s & (UINT64_MAX >> 8)))
		return 1; /* stale slot, a continuation of an older record, garbage */
	if (kind == CT_TAG_BUSY) {
		t->stats.torn++;
		return 1;
	}
	if (kind != CT_TAG_HEAD)
		return 1; /* PAD, a stray CONT, EMPTY */
	rec = (const struct cutrace_record *)(const void *)(t->slots + p * SLOT);
	memcpy(&h, rec, sizeof h);
	size = h.size;
	if (h.seq != s || size < sizeof h || size > CUTRACE_MAX_RECORD) {
		t->stats.bad++;
		return 1;
	}
	n = (size + SLOT - 1) / SLOT;
	if (n > area_end - p || n > t->hdr.head - s) {
		t->stats.bad++;
		return 1;
	}
	for (uint64_t i = 1; i < n; i++)
		if (__atomic_load_n(&t->tags[p + i], __ATOMIC_RELAXED) != CT_TAG_MAKE(s, CT_TAG_CONT)) {
			t->stats.overwritten++;
			return 1;
		}
	if (h.type == CT_REC_EXIT && size < sizeof h + sizeof(struct cutrace_exit)) {
		t->stats.bad++;
		return n;
	}
	if (h.type != CT_REC_ENTER && h.type != CT_REC_EXIT && h.type != CT_REC_NOTE) {
		t->stats.records++; /* a record type from a newer minor version: skip it */
		if (p >= t->hdr.init_slots)
			t->stats.ring_records++;
		return n;
	}
	fill_recv(&rv, rec, h.type, size);
	if (!tlv_ok(rv.fields, rv.fields_len)) {
		t->stats.bad++;
		return n;
	}
	t->stats.records++;
	if (p >= t->hdr.init_slots)
		t->stats.ring_records++;
	*r = on_record(t, &h, rec);
	return n;
}

/* walk logical slots [from, to) of one area (they map to consecutive physical slots) */
static int walk(struct ct_trace *t, uint64_t from, uint64_t to)
{
	int r = 0;

	for (uint64_t s = from; s < to;) {
		uint64_t p = phys_of(t, s);
		uint64_t area_end = s < t->hdr.init_slots ? t->hdr.init_slots : t->nslots;
		drop_advance(t, p);
		s += read_slot(t, s, p, area_end, &r);
		if (r)
			return r;
	}
	return 0;
}

/*
 * Records the ring overwrote (format.h, "Counting"): 1.0 writers counted
 * them in header.dropped; 1.1 writers count their commits outside the init
 * area, and what the walk did not find of those was overwritten.  The
 * counters are read live, after the walk: in a file still being written a
 * record committed behind the walk counts as dropped.
 */
static uint64_t count_dropped(const struct ct_trace *t)
{
	const struct cutrace_header *h = &t->hdr;
	uint64_t sum = 0, found = t->stats.ring_records + t->stats.overwritten + t->missing_ring;

	if (!h->counters_n || h->counter_stride < 8 ||
	    h->counters_off < sizeof *h || h->counters_off > CUTRACE_HEADER_AREA ||
	    (uint64_t)h->counters_n * h->counter_stride > CUTRACE_HEADER_AREA - h->counters_off ||
	    h->counters_off + (uint64_t)h->counters_n * h->counter_stride > t->len)
		return h->dropped;
	for (uint32_t i = 0; i < h->counters_n; i++) {
		uint64_t v;
		memcpy(&v, t->base + h->counters_off + (uint64_t)i * h->counter_stride, sizeof v);
		sum += v;
	}
	return h->dropped + (sum > found ? sum - found : 0);
}

const struct ct_nv_devmap *ct_trace_devmap(const struct ct_trace *t)
{
	return t ? t->devmap : NULL;
}

int ct_trace_events(struct ct_trace *t, ct_event_cb cb, void *user)
{
	const struct cutrace_header *h = &t->hdr;
	uint64_t head = h->head, init_end, ring_from;
	int r;

	memset(&t->stats, 0, sizeof t->stats);
	t->cb = cb;
	t->user = user;
	t->qhead = t->qcount = 0;
	t->next_index = 0;
	t->drop_from = t->drop_next = 0;
	/* every pass starts from the context: no fd is known yet */
	if (!t->devmap)
		t->devmap = malloc(sizeof *t->devmap);
	if (t->devmap)
		ct_nv_devmap_init(t->devmap, t);

	/* the init area, then the ring from its oldest slot that can survive */
	init_end = head < h->init_slots ? head : h->init_slots;
	t->lost_below = head > h->init_slots && head - h->init_slots > h->ring_slots ? head - h->ring_slots : 0;
	r = walk(t, 0, init_end);
	if (!r && head > h->init_slots) {
		ring_from = head - h->init_slots > h->ring_slots ? head - h->ring_slots : h->init_slots;
		/* ring lap by lap: each piece maps to consecutive physical slots */
		for (uint64_t s = ring_from; !r && s < head;) {
			uint64_t off = (s - h->init_slots) % h->ring_slots;
			uint64_t piece = h->ring_slots - off;
			uint64_t end = head - s < piece ? head : s + piece;
			r = walk(t, s, end);
			s = end;
		}
	}
	if (!r)
		r = q_flush(t, true); /* what is left never returned */
	if (!r)
		r = order_flush(t);
	order_free(t);
	t->stats.dropped = count_dropped(t);
	t->order_off = false;
	drop_pages(t, 0, t->nslots);
	t->qcount = 0;
	free(t->q);
	t->q = NULL;
	t->qcap = 0;
	return r;
}
