/*
 * The slot ring of a cutrace file: reservation, padding and commit.
 *
 * One atomic fetch-add reserves every record (or a run of records: format.h,
 * "Runs"), so writers never wait for each other and a writer interrupted by a
 * signal (or killed) leaves at most its own record torn.  Everything else is
 * a plain store: the commit stores the head tag only while it is still the
 * writer's own (ct_ring_commit_tag), and the one read-modify-write on the
 * recording path, the writer's commit counter, takes no lock where the
 * counter is the writer's alone (ct_ring_count).
 */
#include "ring.h"

#include <string.h>

#define SLOT CUTRACE_SLOT_SIZE
/* ct_chunk.fresh of a run in the init area: head never gets this far */
#define CT_FRESH_ALWAYS (UINT64_C(1) << 62)
#define unlikely_(x) __builtin_expect(!!(x), 0)
#define likely_(x)   __builtin_expect(!!(x), 1)

static uint64_t ring_gen; /* attach counter: each attached ring gets a new gen */
/* what writers count in when the file has no counters (format 1.0): the
 * commit never tests for a counter, and nobody reads this one */
static uint64_t no_counter;

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

int ct_ring_layout(struct cutrace_header *h, uint64_t file_size, uint64_t ctx_cap)
{
	uint64_t fixed = CUTRACE_HEADER_AREA + align_up(ctx_cap, 4096);
	uint64_t nslots, tags_bytes;

	if (file_size <= fixed + 2 * 4096)
		return -1;
	/* each slot costs SLOT bytes of data plus an 8-byte tag */
	nslots = (file_size - fixed - 2 * 4096) / (SLOT + 8);
	if (nslots < 64)
		return -1;
	tags_bytes = align_up(nslots * 8, 4096);

	h->file_size = file_size;
	h->ctx_off = CUTRACE_HEADER_AREA;
	h->ctx_cap = ctx_cap;
	h->ctx_len = 0;
	h->tags_off = fixed;
	h->slots_off = fixed + tags_bytes;
	/* a quarter of the slots keep the start of the process forever */
	h->init_slots = nslots / 4;
	h->ring_slots = nslots - h->init_slots;
	h->head = 0;
	h->counters_off = CUTRACE_COUNTERS_OFF;
	h->counters_n = CUTRACE_COUNTERS_N;
	h->counter_stride = CUTRACE_COUNTER_STRIDE;
	return 0;
}

void ct_ring_attach(struct ct_ring *r, void *map)
{
	unsigned char *base = map;

	r->hdr = map;
	r->tags = (uint64_t *)(void *)(base + r->hdr->tags_off);
	r->slots = base + r->hdr->slots_off;
	r->init_slots = r->hdr->init_slots;
	r->ring_slots = r->hdr->ring_slots;
	r->gen = __atomic_add_fetch(&ring_gen, 1, __ATOMIC_RELAXED);
	r->counters = NULL;
	r->counters_n = 0;
	r->next_ctr = 0;
	if (r->hdr->counters_n &&
	    r->hdr->counter_stride == CUTRACE_COUNTER_STRIDE &&
	    r->hdr->counters_off >= sizeof(struct cutrace_header) &&
	    r->hdr->counters_off + (uint64_t)r->hdr->counters_n * CUTRACE_COUNTER_STRIDE <=
		    CUTRACE_HEADER_AREA) {
		r->counters = base + r->hdr->counters_off;
		r->counters_n = r->hdr->counters_n;
	}
}

/* Pad monotonic slot s (physical p): a reservation given up at a boundary. */
static void pad_slot(struct ct_ring *r, uint64_t p, uint64_t s)
{
	__atomic_store_n(&r->tags[p], CT_TAG_MAKE(s, CT_TAG_PAD), __ATOMIC_RELAXED);
}

/*
 * Reserve n consecutive slots from the shared head, padding (and retrying)
 * a reservation that would straddle the end of the init area or of the ring;
 * two retries always suffice, the bound is defensive.  The caller tags the
 * slots.
 */
static int reserve_slots(struct ct_ring *r, uint64_t n, uint64_t *s_out, uint64_t *p_out)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		uint64_t s = __atomic_fetch_add(&r->hdr->head, n, __ATOMIC_RELAXED);
		uint64_t p, i;
		int straddle;

		if (s < r->init_slots) {
			p = s;
			straddle = s + n > r->init_slots;
		} else {
			uint64_t off = (s - r->init_slots) % r->ring_slots;
			p = r->init_slots + off;
			straddle = off + n > r->ring_slots;
		}
		if (straddle) {
			for (i = 0; i < n; i++)
				pad_slot(r, ct_ring_phys(r, s + i), s + i);
			continue;
		}
		*s_out = s;
		*p_out = p;
		return 0;
	}
	__atomic_fetch_add(&r->hdr->lost, 1, __ATOMIC_RELAXED);
	return -1;
}

static inline void fill_slot(struct ct_ring *r, uint64_t s, uint64_t p, uint32_t size, unsigned held,
			     struct ct_slot *out)
{
	struct cutrace_record *rec = (struct cutrace_record *)(void *)(r->slots + p * SLOT);

	out->rec = rec;
	out->seq = s;
	out->phys = p;
	out->size = size;
	out->held = held;
	/* shared reservations: counter 0 */
	out->ctr = r->counters ? (uint64_t *)(void *)r->counters : &no_counter;
	rec->seq = s;
	rec->size = size;
}

int ct_ring_reserve(struct ct_ring *r, uint32_t size, struct ct_slot *out)
{
	uint64_t n = (size + SLOT - 1) / SLOT, s, p;

	if (size < sizeof(struct cutrace_record) || size > CUTRACE_MAX_RECORD || n > r->ring_slots) {
		__atomic_fetch_add(&r->hdr->lost, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (reserve_slots(r, n, &s, &p) < 0)
		return -1;
	ct_ring_tag(r, s, p, n, CT_TAG_BUSY);
	fill_slot(r, s, p, size, CT_TAG_BUSY, out);
	return 0;
}

void ct_ring_commit(struct ct_ring *r, const struct ct_slot *s)
{
	ct_ring_commit_at(r, s->phys, s->seq, s->held ? s->held : CT_TAG_BUSY, s->ctr);
}


/* the run of slots [start, end) begins at physical slot p */
static inline void set_run(const struct ct_ring *r, struct ct_chunk *c, uint64_t start, uint64_t end, uint64_t p)
{
	c->next = start;
	c->end = end;
	c->delta = p - start;
	/* see run_fresh: a run in the init area is never overwritten */
	c->fresh = start < r->init_slots ? CT_FRESH_ALWAYS : r->ring_slots - r->ring_slots / 2;
}

/* take_run when the reservation [s, s + want) reaches past the end of the
 * init area or of the ring (out of line: the common case stays a leaf) */
static __attribute__((noinline)) void take_run_edge(struct ct_ring *r, struct ct_chunk *c, uint64_t s,
						    uint64_t want)
{
	uint64_t init = r->init_slots;

	if (s < init) {
		/* the init part is padding, the run is the ring part */
		for (uint64_t i = s; i < init; i++)
			pad_slot(r, i, i);
		set_run(r, c, init, s + want, init);
	} else {
		uint64_t off = (s - init) % r->ring_slots, end = s + (r->ring_slots - off);
		/* past the end of the ring: what lies at its start is padding */
		for (uint64_t i = end; i < s + want; i++)
			pad_slot(r, ct_ring_phys(r, i), i);
		set_run(r, c, s, end, init + off);
	}
}

/*
 * Take a new run for writer c: c->run_len slots (ring.h, CT_CHUNK_SLOTS),
 * and twice that the next time.  Nothing is written: the records carved out
 * of the run tag their own slots, and slots the run never uses keep older
 * tags, which readers skip as stale.  A run never straddles the end of the
 * init area or of the ring: the part of the reservation past such an end is
 * padded and the run is shorter.
 */
static inline void take_run(struct ct_ring *r, struct ct_chunk *c)
{
	uint64_t want = c->run_len ? c->run_len : CT_CHUNK_SLOTS, init = r->init_slots, s;
	uint64_t cap = r->ring_slots / 32;

	if (cap > CT_CHUNK_MAX)
		cap = CT_CHUNK_MAX;
	c->run_len = (uint32_t)(2 * want <= cap ? 2 * want : want);
	s = __atomic_fetch_add(&r->hdr->head, want, __ATOMIC_RELAXED);
	if (s >= init) {
		uint64_t off = (s - init) % r->ring_slots;
		if (likely_(off + want <= r->ring_slots)) {
			set_run(r, c, s, s + want, init + off);
			return;
		}
	} else if (likely_(s + want <= init)) {
		set_run(r, c, s, s + want, s);
		return;
	}
	take_run_edge(r, c, s, want);
}

/* slot s of a run in the ring is still in the newer half of the ring: a run
 * is given up before the ring comes round to it, so that a record begun in
 * it would need half a lap of other writers' records to be overtaken (a
 * record from the shared head needs a whole lap).  That is
 *     s < init_slots || head + ring_slots / 2 <= s + ring_slots,
 * kept as head <= s + c->fresh (take_run), which the inline claim
 * (ring.h, ct_ring_claim_fast) tests with one load of the head. */
static inline int run_fresh(const struct ct_ring *r, const struct ct_chunk *c, uint64_t s)
{
	return __atomic_load_n(&r->hdr->head, __ATOMIC_RELAXED) <= s + c->fresh;
}

int ct_ring_claim(struct ct_ring *r, struct ct_chunk *c, uint64_t n, uint64_t *s_out, uint64_t *p_out)
{
	int ret;

	if (c->busy) {
		/* a signal handler interrupted this writer inside a claim: the
		 * run is in flux, the shared head is always safe */
		if (unlikely_(n == 0 || n > r->ring_slots)) {
			__atomic_fetch_add(&r->hdr->lost, 1, __ATOMIC_RELAXED);
			return -1;
		}
		return reserve_slots(r, n, s_out, p_out);
	}
	c->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ret = ct_ring_claim_locked(r, c, n, s_out, p_out);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->busy = 0;
	return ret;
}

/* A new writer's commit counter: counters 1 .. counters_n - 1 to the first
 * writers, one each (its own cache line, added to without a lock:
 * ct_ring_count), counter 0, shared, to the rest. */
static uint64_t *take_counter(struct ct_ring *r)
{
	uint32_t k;

	if (!r->counters)
		return &no_counter;
	k = __atomic_fetch_add(&r->next_ctr, 1, __ATOMIC_RELAXED);
	k = k < r->counters_n - 1 ? k + 1 : 0;
	return (uint64_t *)(void *)(r->counters + (size_t)k * CUTRACE_COUNTER_STRIDE);
}

/* ct_ring_claim with c->busy set */
int ct_ring_claim_locked(struct ct_ring *r, struct ct_chunk *c, uint64_t n, uint64_t *s_out, uint64_t *p_out)
{
	uint64_t s;

	if (unlikely_(c->gen != r->gen)) {
		/* a new ring (a new trace file, a forked child): start over */
		c->gen = r->gen;
		c->next = c->end = c->delta = c->fresh = 0;
		c->records = 0;
		c->run_len = 0;
		c->ctr = take_counter(r);
	}
	if (unlikely_(n == 0 || n > r->ring_slots)) {
		__atomic_fetch_add(&r->hdr->lost, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (c->records < CT_CHUNK_AFTER || n > CT_CHUNK_SLOTS / 4 || r->ring_slots < 8 * CT_CHUNK_SLOTS) {
		if (c->records < CT_CHUNK_AFTER)
			c->records++;
		/* give any run up: the writer's next records must come after
		 * this one in seq order too (an exit's seq is above its enter's) */
		c->next = c->end;
		return reserve_slots(r, n, s_out, p_out);
	}
	s = c->next;
	if (unlikely_(s + n > c->end || !run_fresh(r, c, s))) {
		take_run(r, c);
		s = c->next;
		if (s + n > c->end) { /* a short run at the end of the ring */
			c->next = c->end;
			return reserve_slots(r, n, s_out, p_out);
		}
	}
	c->next = s + n;
	*s_out = s;
	*p_out = s + c->delta;
	return 0;
}

int ct_ring_reserve_local(struct ct_ring *r, struct ct_chunk *c, uint32_t size, struct ct_slot *out)
{
	uint64_t n = (size + SLOT - 1) / SLOT, s, p;

	if (unlikely_(size < sizeof(struct cutrace_record) || size > CUTRACE_MAX_RECORD)) {
		__atomic_fetch_add(&r->hdr->lost, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (ct_ring_claim(r, c, n, &s, &p) < 0)
		return -1;
	ct_ring_tag(r, s, p, n, CT_TAG_BUSY);
	fill_slot(r, s, p, size, CT_TAG_BUSY, out);
	out->ctr = c->ctr;
	return 0;
}

int ct_ring_reserve_pair(struct ct_ring *r, struct ct_chunk *c, uint32_t size1, uint32_t size2,
			 struct ct_slot *first, struct ct_slot *second)
{
	uint64_t n1 = (size1 + SLOT - 1) / SLOT, n2 = (size2 + SLOT - 1) / SLOT, s, p;

	if (unlikely_(size1 < sizeof(struct cutrace_record) || size1 > CUTRACE_MAX_RECORD ||
		      size2 < sizeof(struct cutrace_record) || size2 > CUTRACE_MAX_RECORD)) {
		__atomic_fetch_add(&r->hdr->lost, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (ct_ring_claim(r, c, n1 + n2, &s, &p) < 0)
		return -1;
	ct_ring_tag(r, s, p, n1, CT_TAG_BUSY);
	/* the second record is padding until it is committed */
	ct_ring_tag(r, s + n1, p + n1, n2, CT_TAG_PAD);
	fill_slot(r, s, p, size1, CT_TAG_BUSY, first);
	fill_slot(r, s + n1, p + n1, size2, CT_TAG_PAD, second);
	first->ctr = second->ctr = c->ctr;
	return 0;
}

